"""Built-in getters; importing this package registers them."""
from . import chrome, files, general, gimp, impress, info, misc, vlc, vscode  # noqa: F401
