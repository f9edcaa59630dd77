"""Make ``primaldual`` and ``primaldual.models`` importable from a source checkout.

When the package is installed (``pip install -e .``) this does nothing. Otherwise ``models/`` is a
top-level folder that pyproject maps to ``primaldual.models``; we mirror that mapping here so the
tests run with a bare ``PYTHONPATH`` too.
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import primaldual  # noqa: E402

try:
    import primaldual.models  # noqa: F401
except ModuleNotFoundError:
    spec = importlib.util.spec_from_file_location(
        "primaldual.models", ROOT / "models" / "__init__.py", submodule_search_locations=[str(ROOT / "models")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["primaldual.models"] = module
    spec.loader.exec_module(module)
    primaldual.models = module
