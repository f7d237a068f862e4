"""dupdemo: envclean's test package.

Its native part (_C) registers the type Widget in a process-wide registry kept in
builtins, the way pybind11 keeps its internals there, and refuses to register a name
twice. The package is split over folders with pkgutil.extend_path, as plugin packages
are, and loads the native part of each folder: so a second copy of dupdemo on sys.path
brings a second native part into the process, and the import fails the way torch's does
("generic_type: cannot initialize type ...").
"""
import importlib.machinery
import importlib.util
import os
import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)


def _native(folder):
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        f = os.path.join(folder, "_C" + suffix)
        if os.path.isfile(f):
            spec = importlib.util.spec_from_file_location(__name__ + "._C", f)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    return None


_C = [m for m in map(_native, __path__) if m is not None][0]
widget = _C.widget
