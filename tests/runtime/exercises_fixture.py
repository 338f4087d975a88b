# A chapter's exercise section in miniature (tests/runtime/test_teaching.py): one exercise of each graded kind.
# It is read as a jupytext source, never imported.
# %% [markdown]
# ## Exercises

# %% tags=["exercise-setup"]
import numpy as np

# %% [markdown]
# ```{exercise} AUC by hand
# :label: ex-eve-hand
# :class: by-hand
#
# Compute the AUC of scores {math}`s=(0.1, 0.4, 0.35, 0.8)` for labels (0,0,1,1), see {eq}`eq-eve-eve` and
# {func}`~medeval.metrics.curves.roc_auc`.
# Store it in `ex_hand_auc`.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-hand
# :class: dropdown
# ```
# Three of four pairs are ordered: 0.75.

# %% tags=["solution"]
ex_hand_auc = 3 / 4
ex_hand_auc

# %% tags=["remove-cell", "check"]
from medeval.metrics.curves import roc_auc

assert np.isclose(ex_hand_auc, roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])), "not the AUC"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} AUC in code
# :label: ex-eve-code
# :class: coding
#
# Write `ex_auc(y, s)`.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-code
# :class: dropdown
# ```

# %% tags=["solution"]
def ex_auc(y, s):
    """AUC as the fraction of ordered pairs."""
    y, s = np.asarray(y), np.asarray(s)
    pos, neg = s[y == 1], s[y == 0]
    return float(np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])))

# %% tags=["remove-cell", "check"]
assert np.isclose(ex_auc([0, 1], [0.2, 0.9]), 1.0)

# %% tags=["remove-cell", "check"]
from medeval.metrics.curves import roc_auc

assert np.isclose(ex_auc([0, 1, 0, 1], [0.5, 0.5, 0.1, 0.9]), roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.1, 0.9]))

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} AUC of a shifted score
# :label: ex-eve-experiment
# :class: experimental
#
# Add 0.3 to the positives' scores and store the new AUC in `ex_shifted_auc`.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-experiment
# :class: dropdown
# ```
# Every positive now outranks every negative: the AUC is 1.

# %% tags=["solution"]
from medeval.metrics.curves import roc_auc

ex_shifted_auc = roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.65, 1.1])

# %% tags=["remove-cell", "check"]
assert ex_shifted_auc == 1.0, "the shifted positives all outrank the negatives"

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ```{exercise} Is it true?
# :label: ex-eve-critical
# :class: critical
#
# Discuss.
# ```

# %% [markdown]
# ```{solution-start} ex-eve-critical
# :class: dropdown
# ```
# Model answer here.
#
# ```{solution-end}
# ```
