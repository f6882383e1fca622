import corral


def test_all_is_sorted_and_importable() -> None:
    assert corral.__all__ == sorted(corral.__all__)
    for name in corral.__all__:
        assert hasattr(corral, name), name
