"""Input validation shared by the reference encodings."""


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` holds."""
    if not condition:
        raise ValueError(message)


def require_positive_int(value: object, name: str) -> None:
    require(
        isinstance(value, int) and not isinstance(value, bool) and value >= 1,
        f"{name} must be a positive integer, got {value!r}",
    )


def require_even(value: int, name: str) -> None:
    require_positive_int(value, name)
    require(value % 2 == 0, f"{name} must be even (features come in pairs), got {value}")
