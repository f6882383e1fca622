"""Manifest validation: every seed-000 rule, every violation reported with its field path and rule id.

The validator walks the raw JSON (not a decoded object) so that one broken field never hides
another: a manifest breaking five rules yields five :class:`Violation` values. Only a manifest with
no violation is decoded into :class:`~corral.manifests.Manifest`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import msgspec

from ..errors import ManifestError
from ._model import ApprovalPolicy, Manifest, Platform, PromptInjection, Status
from .protocols import PROTOCOLS

RULES: dict[str, str] = {
    "json-syntax": "the file is valid JSON",
    "object": "the manifest (and each nested section) is a JSON object",
    "required": "a required field is present",
    "type": "a field has the JSON type the schema gives it",
    "unknown-field": "no field outside the schema (catches misspelt keys)",
    "id-charset": "id uses only the characters A-Z a-z 0-9 . _ -",
    "id-length": "id is 1 to 80 characters long",
    "non-empty": "a string is not empty or blank (launchCommand, executables, displayName, …)",
    "min-one": "a list has at least one item (executables, supportedPlatforms, supportedApprovalPolicies)",
    "unique": "a list has no duplicate items",
    "platform": "supportedPlatforms values are macos, windows or linux",
    "approval-policy": "supportedApprovalPolicies values are read-only, default or full",
    "prompt-injection": "promptInjection is stdin, paste_then_enter or manual",
    "status": "status is installed, missing or unknown",
    "install-one-source": "install names exactly one package source: npm or pip",
    "structured-flag": "supportsStructured is true exactly when streaming.preferred is set",
    "session-mode-persistent": "streaming.preferred.sessionMode starts with 'persistent-'",
    "follow-up-true": "streaming.preferred.supportsFollowUp is exactly true",
    "protocol-known": "streaming.preferred.protocol is one of the closed protocol set",
    "prompt-delivery-matches": "streaming.preferred.promptDelivery equals the protocol's own",
    "id-available": "(registry) a custom manifest's id is not taken by a built-in or another adapter",
}
"""Every rule id the validator can report, with the rule in words."""

_ID_CHARSET = re.compile(r"^[A-Za-z0-9._-]*$")

_TOP_FIELDS = {
    "id",
    "displayName",
    "icon",
    "executables",
    "supportedPlatforms",
    "supportedApprovalPolicies",
    "launchCommand",
    "promptInjection",
    "status",
    "setupHint",
    "install",
    "enabled",
    "supportsStructured",
    "presentation",
    "streaming",
    "$schema",
}
_PROFILE_FIELDS = {"launchCommand", "promptDelivery", "protocol", "sessionMode", "supportsFollowUp"}


class Violation(msgspec.Struct, frozen=True, kw_only=True):
    """One broken rule: where (a dotted field path), which rule, and what was found."""

    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '<manifest>'}: [{self.rule}] {self.message}"


class _Checker:
    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def add(self, path: str, rule: str, message: str) -> None:
        self.violations.append(Violation(path=path, rule=rule, message=message))

    def unknown(self, obj: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
        for key in obj:
            if key not in allowed:
                self.add(_join(prefix, key), "unknown-field", f"unknown field {key!r}")

    def string(
        self,
        obj: Mapping[str, Any],
        key: str,
        path: str,
        *,
        required: bool,
        non_empty: bool,
        nullable: bool = False,
    ) -> str | None:
        if key not in obj:
            if required:
                self.add(path, "required", f"{key} is required")
            return None
        value = obj[key]
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            self.add(path, "type", f"must be a string, got {_kind(value)}")
            return None
        if non_empty and not value.strip():
            self.add(path, "non-empty", "must not be empty")
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str) -> bool | None:
        if key not in obj:
            return None
        value = obj[key]
        if not isinstance(value, bool):
            self.add(path, "type", f"must be true or false, got {_kind(value)}")
            return None
        return value

    def choice(
        self,
        obj: Mapping[str, Any],
        key: str,
        allowed: Sequence[str],
        rule: str,
        *,
        required: bool,
    ) -> None:
        value = self.string(obj, key, key, required=required, non_empty=False)
        if value is not None and value not in allowed:
            self.add(key, rule, f"{value!r} is not one of {', '.join(allowed)}")

    def string_list(
        self,
        obj: Mapping[str, Any],
        key: str,
        path: str,
        item_check: Callable[[str, str], None] | None = None,
    ) -> None:
        if key not in obj:
            self.add(path, "required", f"{key} is required")
            return
        value = obj[key]
        if not isinstance(value, list):
            self.add(path, "type", f"must be a list of strings, got {_kind(value)}")
            return
        if not value:
            self.add(path, "min-one", "must list at least one item")
        seen: set[str] = set()
        for i, item in enumerate(value):
            item_path = f"{path}[{i}]"
            if not isinstance(item, str):
                self.add(item_path, "type", f"must be a string, got {_kind(item)}")
                continue
            if item in seen:
                self.add(item_path, "unique", f"{item!r} is listed twice")
            seen.add(item)
            if item_check is not None:
                item_check(item, item_path)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def validate_manifest(data: Any) -> list[Violation]:
    """Every rule ``data`` (a parsed JSON manifest) breaks; empty when the manifest is valid."""
    c = _Checker()
    if not isinstance(data, dict):
        c.add("", "object", f"a manifest must be a JSON object, got {_kind(data)}")
        return c.violations
    c.unknown(data, _TOP_FIELDS, "")

    manifest_id = c.string(data, "id", "id", required=True, non_empty=False)
    if manifest_id is not None:
        if not 1 <= len(manifest_id) <= 80:
            c.add("id", "id-length", f"must be 1 to 80 characters, got {len(manifest_id)}")
        if not _ID_CHARSET.match(manifest_id):
            bad = sorted({ch for ch in manifest_id if not _ID_CHARSET.match(ch)})
            c.add("id", "id-charset", f"characters not allowed: {''.join(bad)!r}")
    c.string(data, "displayName", "displayName", required=True, non_empty=True)
    c.string(data, "launchCommand", "launchCommand", required=True, non_empty=True)
    c.string(data, "icon", "icon", required=False, non_empty=False, nullable=True)
    c.string(data, "setupHint", "setupHint", required=False, non_empty=False)

    def non_empty_item(item: str, path: str) -> None:
        if not item.strip():
            c.add(path, "non-empty", "must not be empty")

    def member(allowed: tuple[str, ...], rule: str) -> Callable[[str, str], None]:
        def check(item: str, path: str) -> None:
            if item not in allowed:
                c.add(path, rule, f"{item!r} is not one of {', '.join(allowed)}")

        return check

    c.string_list(data, "executables", "executables", non_empty_item)
    c.string_list(
        data, "supportedPlatforms", "supportedPlatforms", member(get_args(Platform), "platform")
    )
    c.string_list(
        data,
        "supportedApprovalPolicies",
        "supportedApprovalPolicies",
        member(get_args(ApprovalPolicy), "approval-policy"),
    )
    c.choice(data, "promptInjection", get_args(PromptInjection), "prompt-injection", required=True)
    c.choice(data, "status", get_args(Status), "status", required=False)
    c.boolean(data, "enabled", "enabled")
    structured_flag = c.boolean(data, "supportsStructured", "supportsStructured")
    if "presentation" in data and not isinstance(data["presentation"], dict):
        c.add("presentation", "type", f"must be an object, got {_kind(data['presentation'])}")
    _check_install(c, data)

    has_profile = _check_streaming(c, data)
    if structured_flag is not None and has_profile is not None and structured_flag != has_profile:
        c.add(
            "supportsStructured",
            "structured-flag",
            "is true but streaming.preferred is missing"
            if structured_flag
            else "is false but streaming.preferred is set",
        )
    elif structured_flag is None and has_profile:
        c.add(
            "supportsStructured", "structured-flag", "must be true when streaming.preferred is set"
        )
    return c.violations


def _check_install(c: _Checker, data: Mapping[str, Any]) -> None:
    if "install" not in data or data["install"] is None:
        return
    install = data["install"]
    if not isinstance(install, dict):
        c.add("install", "type", f"must be an object, got {_kind(install)}")
        return
    c.unknown(install, {"npm", "pip"}, "install")
    sources = [k for k in ("npm", "pip") if k in install]
    if len(sources) != 1:
        c.add("install", "install-one-source", "must name exactly one of npm, pip")
    for key in sources:
        c.string(install, key, f"install.{key}", required=False, non_empty=True, nullable=True)


def _check_streaming(c: _Checker, data: Mapping[str, Any]) -> bool | None:
    """Check ``streaming``; returns whether a structured profile is present (None: unreadable)."""
    if "streaming" not in data:
        return False
    streaming = data["streaming"]
    if not isinstance(streaming, dict):
        c.add("streaming", "type", f"must be an object, got {_kind(streaming)}")
        return None
    c.unknown(streaming, {"preferred"}, "streaming")
    if "preferred" not in streaming or streaming["preferred"] is None:
        return False
    profile = streaming["preferred"]
    base = "streaming.preferred"
    if not isinstance(profile, dict):
        c.add(base, "type", f"must be an object, got {_kind(profile)}")
        return None
    c.unknown(profile, _PROFILE_FIELDS, base)
    c.string(profile, "launchCommand", f"{base}.launchCommand", required=True, non_empty=True)
    mode = c.string(profile, "sessionMode", f"{base}.sessionMode", required=True, non_empty=False)
    if mode is not None and not mode.startswith("persistent-"):
        c.add(
            f"{base}.sessionMode",
            "session-mode-persistent",
            f"{mode!r} does not start with 'persistent-': one-shot agents are not accepted",
        )
    if "supportsFollowUp" not in profile:
        c.add(f"{base}.supportsFollowUp", "required", "supportsFollowUp is required")
    elif profile["supportsFollowUp"] is not True:
        c.add(
            f"{base}.supportsFollowUp",
            "follow-up-true",
            f"must be exactly true, got {json.dumps(profile['supportsFollowUp'])}",
        )
    name = c.string(profile, "protocol", f"{base}.protocol", required=True, non_empty=False)
    spec = PROTOCOLS.get(name) if name is not None else None
    if name is not None and spec is None:
        c.add(
            f"{base}.protocol",
            "protocol-known",
            f"{name!r} is not a known protocol ({', '.join(PROTOCOLS)})",
        )
    delivery = c.string(
        profile, "promptDelivery", f"{base}.promptDelivery", required=True, non_empty=False
    )
    if spec is not None and delivery is not None and delivery != spec.prompt_delivery:
        c.add(
            f"{base}.promptDelivery",
            "prompt-delivery-matches",
            f"{delivery!r} does not match {spec.name}'s own prompt delivery "
            f"{spec.prompt_delivery.value!r}",
        )
    return True


def parse_manifest(data: Any, *, source: str = "manifest") -> Manifest:
    """Validate ``data`` and decode it; raises :class:`ManifestError` listing every violation."""
    violations = validate_manifest(data)
    if violations:
        raise ManifestError(
            f"{source} breaks {len(violations)} rule(s): " + "; ".join(map(str, violations)),
            violations,
        )
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "$schema"}
    return msgspec.convert(data, Manifest)


def read_manifest_file(path: str | Path) -> Any:
    """Parse a manifest file's JSON; a syntax error is a :class:`ManifestError` (rule json-syntax).

    A missing or unreadable file raises ``OSError``.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        v = Violation(path="", rule="json-syntax", message=f"line {exc.lineno}: {exc.msg}")
        raise ManifestError(f"{path} is not valid JSON: {exc}", [v]) from exc


def load_manifest(path: str | Path) -> Manifest:
    """Read, validate and decode a manifest file."""
    return parse_manifest(read_manifest_file(path), source=str(path))
