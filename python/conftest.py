"""pytest set-up: the doc examples see `plexus` (and `np`) as a user's
session would after `import plexus`."""
import numpy as np
import pytest

import plexus


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace["plexus"] = plexus
    doctest_namespace["np"] = np
