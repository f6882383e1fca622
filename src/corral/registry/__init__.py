"""The adapter registry, executable resolution and the detect → probe → verify → repair lifecycle.

See ``docs/adapters.md``. Built-in manifests ship as JSON in ``corral/registry/builtin/``.

The names load on first use (PEP 562): ``corral run`` imports :mod:`._builtin` and :mod:`._gate`
without the registry's entry-point scan, the drop-in loader or the lifecycle (decision 039).
"""

from __future__ import annotations

from .._exports import lazy_exports

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from ._builtin import EXTRA_ADAPTERS_ENV, load_builtin_manifests
    from ._dropins import (
        ADAPTERS_GROUP,
        DRIVERS_GROUP,
        HOOK,
        AdapterRef,
        LoadProblem,
        Register,
        Registration,
        load_ref,
        manifest_for_class,
    )
    from ._gate import launch_gate
    from ._lifecycle import (
        CheckResult,
        Detection,
        detect,
        detect_many,
        find_executable,
        probe,
        repair_command,
        verify,
        verify_argv,
    )
    from ._profiles import (
        Profile,
        check_profile,
        load_profile,
        load_profiles,
        profile_key,
        save_profile,
    )
    from ._registry import Registry, RegistryEntry, Runnable, default_ext_dir, detect_entries
    from ._resolve import (
        ResolvedExecutable,
        current_platform,
        pinned_bin_dirs,
        pinned_executable,
        resolve_executable_path,
    )
    from ._state import VerifyRecord, ensure_verified, is_stale, last_verify, record_verify

__all__ = [
    "ADAPTERS_GROUP",
    "DRIVERS_GROUP",
    "EXTRA_ADAPTERS_ENV",
    "HOOK",
    "AdapterRef",
    "CheckResult",
    "Detection",
    "LoadProblem",
    "Profile",
    "Register",
    "Registration",
    "Registry",
    "RegistryEntry",
    "ResolvedExecutable",
    "Runnable",
    "VerifyRecord",
    "check_profile",
    "current_platform",
    "default_ext_dir",
    "detect",
    "detect_entries",
    "detect_many",
    "ensure_verified",
    "find_executable",
    "is_stale",
    "last_verify",
    "launch_gate",
    "load_builtin_manifests",
    "load_profile",
    "load_profiles",
    "load_ref",
    "manifest_for_class",
    "pinned_bin_dirs",
    "pinned_executable",
    "probe",
    "profile_key",
    "record_verify",
    "repair_command",
    "resolve_executable_path",
    "save_profile",
    "verify",
    "verify_argv",
]

# Public name → the module that defines it.
_LAZY = {
    "ADAPTERS_GROUP": "._dropins",
    "AdapterRef": "._dropins",
    "CheckResult": "._lifecycle",
    "DRIVERS_GROUP": "._dropins",
    "Detection": "._lifecycle",
    "EXTRA_ADAPTERS_ENV": "._builtin",
    "HOOK": "._dropins",
    "LoadProblem": "._dropins",
    "Profile": "._profiles",
    "Register": "._dropins",
    "Registration": "._dropins",
    "Registry": "._registry",
    "RegistryEntry": "._registry",
    "ResolvedExecutable": "._resolve",
    "Runnable": "._registry",
    "VerifyRecord": "._state",
    "check_profile": "._profiles",
    "current_platform": "._resolve",
    "default_ext_dir": "._registry",
    "detect": "._lifecycle",
    "detect_entries": "._registry",
    "detect_many": "._lifecycle",
    "ensure_verified": "._state",
    "find_executable": "._lifecycle",
    "is_stale": "._state",
    "last_verify": "._state",
    "launch_gate": "._gate",
    "load_builtin_manifests": "._builtin",
    "load_profile": "._profiles",
    "load_profiles": "._profiles",
    "load_ref": "._dropins",
    "manifest_for_class": "._dropins",
    "pinned_bin_dirs": "._resolve",
    "pinned_executable": "._resolve",
    "probe": "._lifecycle",
    "profile_key": "._profiles",
    "record_verify": "._state",
    "repair_command": "._lifecycle",
    "resolve_executable_path": "._resolve",
    "save_profile": "._profiles",
    "verify": "._lifecycle",
    "verify_argv": "._lifecycle",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
