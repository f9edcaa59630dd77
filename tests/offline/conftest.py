"""Make ``primaldual`` and ``primaldual.models`` importable from a bare source checkout, as in
``tests/lbbsp/conftest.py`` (when the package is installed this does nothing). Shared helpers live in
``offline_helpers.py`` (a uniquely named module: ``from conftest import ...`` would be ambiguous across test
directories)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import primaldual  # noqa: E402

try:
    import primaldual.models  # noqa: F401
except ModuleNotFoundError:  # pragma: no cover - only without an editable install
    spec = importlib.util.spec_from_file_location(
        "primaldual.models", ROOT / "models" / "__init__.py", submodule_search_locations=[str(ROOT / "models")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["primaldual.models"] = module
    spec.loader.exec_module(module)
    primaldual.models = module
