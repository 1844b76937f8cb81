"""A pytest plugin: the doc examples see `plexus` (and `np`) as a user's
session would after `import plexus`. `python/conftest.py` loads it for runs
from the source tree; `python/ci.sh` passes it with `-p` when it tests the
installed package from another directory."""
import numpy as np
import pytest

import plexus


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace["plexus"] = plexus
    doctest_namespace["np"] = np
