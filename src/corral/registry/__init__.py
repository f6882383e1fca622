"""The adapter registry, executable resolution and the detect → probe → verify → repair lifecycle.

See ``docs/adapters.md``. Built-in manifests ship as JSON in ``corral/registry/builtin/``.
"""

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
from ._registry import (
    EXTRA_ADAPTERS_ENV,
    Registry,
    RegistryEntry,
    Runnable,
    default_ext_dir,
    detect_entries,
    load_builtin_manifests,
)
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
