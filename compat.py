"""What the TVM-spelled API (`import tilecraft as tvm`) raises for TVM names it lacks."""


class UnsupportedError(NotImplementedError, AttributeError):
    """A TVM function or attribute that tilecraft does not provide; the message names
    it and says why. It is an AttributeError too, so `hasattr` stays False."""
