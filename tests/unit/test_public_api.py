import importlib

import corral


def test_all_is_sorted_and_importable() -> None:
    assert corral.__all__ == sorted(corral.__all__)
    for name in corral.__all__:
        assert hasattr(corral, name), name


def test_every_lazy_name_is_public_and_from_its_module() -> None:
    assert set(corral._LAZY) == set(corral.__all__) - {"__version__"}
    for name, module in corral._LAZY.items():
        assert getattr(corral, name) is getattr(importlib.import_module(f"corral{module}"), name)
    namespace: dict[str, object] = {}
    exec("from corral import *", namespace)
    assert set(corral.__all__) <= set(namespace)


def test_every_lazy_sessions_name_is_public_and_from_its_module() -> None:
    import corral.sessions as sessions

    assert set(sessions._LAZY) == set(sessions.__all__)
    for name, module in sessions._LAZY.items():
        defined = importlib.import_module(f"corral.sessions{module}")
        assert getattr(sessions, name) is getattr(defined, name), name
    namespace: dict[str, object] = {}
    exec("from corral.sessions import *", namespace)
    assert set(sessions.__all__) <= set(namespace)
