"""One declared sandbox environment: the lock both backends install, its hash, the local venv built from it.

``load_lock()`` -> :class:`SandboxLock` (pins + sha256), ``build_local_env()`` / ``local_env_facts()`` ->
:class:`EnvironmentFacts` (cached by lock hash in ``<cache>/sandbox-env/<hash>/env.json``).
"""

from kramabench.sandbox.environment.local_env import (
    KEY_PACKAGES,
    EnvironmentFacts,
    SandboxEnvironmentError,
    base_interpreter,
    build_local_env,
    env_dir,
    env_root,
    kramabench_home,
    local_env_facts,
    probe,
    read_facts,
)
from kramabench.sandbox.environment.lock import (
    BASE_LOCK,
    EXTRA_LOCK_ENV,
    MODULES_FILE,
    LockError,
    SandboxLock,
    extra_lock_paths,
    import_names,
    load_lock,
    packages_text,
    parse_lock,
    parse_modules,
    wheel_import_names,
)

__all__ = [
    "BASE_LOCK",
    "EXTRA_LOCK_ENV",
    "KEY_PACKAGES",
    "MODULES_FILE",
    "EnvironmentFacts",
    "LockError",
    "SandboxEnvironmentError",
    "SandboxLock",
    "base_interpreter",
    "build_local_env",
    "env_dir",
    "env_root",
    "extra_lock_paths",
    "import_names",
    "kramabench_home",
    "load_lock",
    "local_env_facts",
    "packages_text",
    "parse_lock",
    "parse_modules",
    "probe",
    "read_facts",
    "wheel_import_names",
]
