"""Built-in metrics; importing this package registers them."""
from . import basic_os, chrome, docs, epub, general, gimp, infeasible, pdf, slides, table, thunderbird, vlc, vscode  # noqa: F401
