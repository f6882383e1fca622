"""Every manifest rule, table-driven: one mutation of a valid manifest → exactly the expected violations.

The same table is checked against the published JSON Schema, so the schema and the validator
cannot drift apart.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from corral.errors import ManifestError
from corral.manifests import (
    RULES,
    Manifest,
    load_manifest,
    manifest_schema,
    parse_manifest,
    validate_manifest,
)


def valid() -> dict[str, Any]:
    return {
        "id": "my-agent_1.0",
        "displayName": "My Agent",
        "executables": ["my-agent"],
        "launchCommand": "my-agent",
        "supportedPlatforms": ["linux", "macos", "windows"],
        "supportedApprovalPolicies": ["default", "full"],
        "promptInjection": "paste_then_enter",
        "status": "unknown",
        "setupHint": "Install with npm i -g my-agent",
        "install": {"npm": "my-agent"},
        "supportsStructured": True,
        "streaming": {
            "preferred": {
                "launchCommand": "my-agent --acp",
                "promptDelivery": "json-rpc",
                "protocol": "acp",
                "sessionMode": "persistent-session",
                "supportsFollowUp": True,
            }
        },
    }


Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    def apply(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            m = m[key]
        m[last] = value

    return apply


def _del(path: str) -> Mutation:
    def apply(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            m = m[key]
        del m[last]

    return apply


def _all(*mutations: Mutation) -> Mutation:
    def apply(m: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(m)

    return apply


P = "streaming.preferred"

# (case id, mutation, expected {(path, rule)})
CASES: list[tuple[str, Mutation, set[tuple[str, str]]]] = [
    ("id-charset-space", _set("id", "my agent"), {("id", "id-charset")}),
    ("id-charset-slash", _set("id", "a/b"), {("id", "id-charset")}),
    ("id-charset-unicode", _set("id", "agént"), {("id", "id-charset")}),
    ("id-too-long", _set("id", "a" * 81), {("id", "id-length")}),
    ("id-empty", _set("id", ""), {("id", "id-length")}),
    ("id-missing", _del("id"), {("id", "required")}),
    ("id-not-string", _set("id", 7), {("id", "type")}),
    ("display-name-blank", _set("displayName", " "), {("displayName", "non-empty")}),
    ("launch-empty", _set("launchCommand", ""), {("launchCommand", "non-empty")}),
    ("launch-blank", _set("launchCommand", "   "), {("launchCommand", "non-empty")}),
    ("launch-missing", _del("launchCommand"), {("launchCommand", "required")}),
    ("executables-empty", _set("executables", []), {("executables", "min-one")}),
    ("executables-missing", _del("executables"), {("executables", "required")}),
    ("executables-not-list", _set("executables", "claude"), {("executables", "type")}),
    ("executables-blank-item", _set("executables", ["a", ""]), {("executables[1]", "non-empty")}),
    ("executables-duplicate", _set("executables", ["a", "a"]), {("executables[1]", "unique")}),
    ("executables-item-type", _set("executables", [3]), {("executables[0]", "type")}),
    (
        "platform-unknown",
        _set("supportedPlatforms", ["linux", "beos"]),
        {("supportedPlatforms[1]", "platform")},
    ),
    ("platforms-empty", _set("supportedPlatforms", []), {("supportedPlatforms", "min-one")}),
    (
        "approval-unknown",
        _set("supportedApprovalPolicies", ["yolo"]),
        {("supportedApprovalPolicies[0]", "approval-policy")},
    ),
    (
        "approvals-empty",
        _set("supportedApprovalPolicies", []),
        {("supportedApprovalPolicies", "min-one")},
    ),
    (
        "prompt-injection-unknown",
        _set("promptInjection", "telepathy"),
        {("promptInjection", "prompt-injection")},
    ),
    ("prompt-injection-missing", _del("promptInjection"), {("promptInjection", "required")}),
    ("status-unknown", _set("status", "broken"), {("status", "status")}),
    ("enabled-not-bool", _set("enabled", "yes"), {("enabled", "type")}),
    ("presentation-not-object", _set("presentation", []), {("presentation", "type")}),
    ("unknown-field", _set("launchComand", "x"), {("launchComand", "unknown-field")}),
    (
        "install-two-sources",
        _set("install", {"npm": "a", "pip": "b"}),
        {("install", "install-one-source")},
    ),
    ("install-no-source", _set("install", {}), {("install", "install-one-source")}),
    (
        "install-unknown-source",
        _set("install", {"cargo": "x"}),
        {("install.cargo", "unknown-field"), ("install", "install-one-source")},
    ),
    ("install-blank", _set("install", {"pip": ""}), {("install.pip", "non-empty")}),
    (
        "structured-flag-false-with-profile",
        _set("supportsStructured", False),
        {("supportsStructured", "structured-flag")},
    ),
    (
        "structured-flag-missing-with-profile",
        _del("supportsStructured"),
        {("supportsStructured", "structured-flag")},
    ),
    (
        "structured-flag-true-without-profile",
        _del("streaming"),
        {("supportsStructured", "structured-flag")},
    ),
    (
        "session-mode-one-shot",
        _set(f"{P}.sessionMode", "one-shot"),
        {(f"{P}.sessionMode", "session-mode-persistent")},
    ),
    (
        "session-mode-no-dash",
        _set(f"{P}.sessionMode", "persistent"),
        {(f"{P}.sessionMode", "session-mode-persistent")},
    ),
    (
        "follow-up-false",
        _set(f"{P}.supportsFollowUp", False),
        {(f"{P}.supportsFollowUp", "follow-up-true")},
    ),
    (
        "follow-up-truthy-string",
        _set(f"{P}.supportsFollowUp", "true"),
        {(f"{P}.supportsFollowUp", "follow-up-true")},
    ),
    (
        "follow-up-one",
        _set(f"{P}.supportsFollowUp", 1),
        {(f"{P}.supportsFollowUp", "follow-up-true")},
    ),
    ("follow-up-missing", _del(f"{P}.supportsFollowUp"), {(f"{P}.supportsFollowUp", "required")}),
    (
        "protocol-unknown",
        _set(f"{P}.protocol", "carrier-pigeon"),
        {(f"{P}.protocol", "protocol-known")},
    ),
    (
        "delivery-mismatch",
        _set(f"{P}.promptDelivery", "stdin"),
        {(f"{P}.promptDelivery", "prompt-delivery-matches")},
    ),
    (
        "plain-stdin-is-json-rpc",
        _all(_set(f"{P}.protocol", "plain-stdin"), _set(f"{P}.promptDelivery", "stdin")),
        {(f"{P}.promptDelivery", "prompt-delivery-matches")},
    ),
    (
        "profile-launch-blank",
        _set(f"{P}.launchCommand", ""),
        {(f"{P}.launchCommand", "non-empty")},
    ),
    ("profile-unknown-field", _set(f"{P}.mode", "x"), {(f"{P}.mode", "unknown-field")}),
    ("streaming-not-object", _set("streaming", "fast"), {("streaming", "type")}),
]


def _mutated(mutation: Mutation) -> dict[str, Any]:
    m = valid()
    mutation(m)
    return m


@pytest.mark.parametrize(
    ("mutation", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_rule(mutation: Mutation, expected: set[tuple[str, str]]) -> None:
    found = {(v.path, v.rule) for v in validate_manifest(_mutated(mutation))}
    assert found == expected


@pytest.mark.parametrize("mutation", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_schema_rejects_what_the_validator_rejects(mutation: Mutation) -> None:
    validator = jsonschema.Draft202012Validator(manifest_schema())
    assert list(validator.iter_errors(_mutated(mutation))), "schema accepted an invalid manifest"


def test_valid_manifest_passes_validator_and_schema() -> None:
    assert validate_manifest(valid()) == []
    jsonschema.validate(valid(), manifest_schema(), cls=jsonschema.Draft202012Validator)
    m = parse_manifest(valid())
    assert isinstance(m, Manifest)
    assert m.structured is not None
    assert m.structured.spec.driver == "acp"


def test_shell_only_manifest_is_valid() -> None:
    m = valid()
    del m["streaming"]
    m["supportsStructured"] = False
    assert validate_manifest(m) == []
    assert parse_manifest(m).structured is None


def test_every_rule_is_exercised() -> None:
    exercised = {rule for _, _, expected in CASES for _, rule in expected}
    exercised |= {"object", "json-syntax", "id-available"}  # tested below and in the registry tests
    assert set(RULES) == exercised


def test_every_violation_is_reported_not_just_the_first() -> None:
    m = valid()
    m["id"] = "bad id"
    m["launchCommand"] = ""
    m["executables"] = []
    m["promptInjection"] = "telepathy"
    m["streaming"]["preferred"]["sessionMode"] = "one-shot"
    violations = validate_manifest(m)
    assert [(v.path, v.rule) for v in violations] == [
        ("id", "id-charset"),
        ("launchCommand", "non-empty"),
        ("executables", "min-one"),
        ("promptInjection", "prompt-injection"),
        ("streaming.preferred.sessionMode", "session-mode-persistent"),
    ]
    with pytest.raises(ManifestError) as info:
        parse_manifest(m)
    assert info.value.violations == violations
    assert info.value.exit_code == 3


@pytest.mark.parametrize("data", [[], "x", None, 3])
def test_non_object_manifest(data: Any) -> None:
    assert [(v.path, v.rule) for v in validate_manifest(data)] == [("", "object")]


def test_json_syntax_error_is_a_manifest_error(tmp_path: Path) -> None:
    f = tmp_path / "m.json"
    f.write_text('{"id": "x",')
    with pytest.raises(ManifestError) as info:
        load_manifest(f)
    assert [v.rule for v in info.value.violations] == ["json-syntax"]


def test_manifest_round_trips_through_json(tmp_path: Path) -> None:
    m = parse_manifest(valid())
    f = tmp_path / "m.json"
    f.write_text(json.dumps(m.to_json()))
    assert load_manifest(f) == m
    assert copy.deepcopy(m.to_json())["streaming"]["preferred"]["supportsFollowUp"] is True


def test_schema_key_is_allowed() -> None:
    m = valid()
    m["$schema"] = "./manifest.schema.json"
    assert validate_manifest(m) == []
    assert parse_manifest(m).id == "my-agent_1.0"
