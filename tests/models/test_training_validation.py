"""train_with_validation: Keras-style ReduceLROnPlateau, early stopping with best weights, augmentation."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from medeval.models.training import TrainingHistory, train_model, train_with_validation


class Scalar(torch.nn.Module):
    """y = w * x with one weight: its training and validation losses are simple functions of w."""

    def __init__(self, w=0.0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([float(w)]))

    def forward(self, x):
        return x[:, :1] * self.w


def _const(n, value):
    return (torch.ones(n, 1), torch.full((n, 1), float(value)))


def test_early_stopping_stops_and_restores_the_best_weights():
    # training pulls w towards 10 (Adam: ~lr per step); the validation loss (w - 3)^2 is lowest near w = 3
    model = Scalar()
    seen: list[float] = []

    def loss_fn(out, y):
        return F.mse_loss(out, y)

    class Record(torch.utils.data.Dataset):
        def __init__(self, x, y):
            self.x, self.y = x, y

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            if i == 0:
                seen.append(float(model.w.detach()))  # the weight at each validation pass
            return self.x[i], self.y[i]

    hist = train_with_validation(
        model, _const(4, 10), Record(*_const(4, 3)), loss_fn,
        max_epochs=50, batch_size=4, lr=1.0, lr_patience=100, early_stopping_patience=3, device="cpu",
    )  # fmt: skip
    assert isinstance(hist, TrainingHistory)
    assert hist.stopped_early and hist.epochs_run < 50
    assert hist.epochs_run == hist.best_epoch + 3
    assert hist.best_val_loss == min(hist.val_loss) == hist.val_loss[hist.best_epoch - 1]
    assert hist.restored_best
    # the returned weight is the one validated at the best epoch, not the last one
    assert float(model.w.detach()) == pytest.approx(seen[hist.best_epoch - 1], abs=0)
    assert abs(float(model.w.detach()) - 3) < 1.0 and abs(seen[-1] - 3) > abs(float(model.w.detach()) - 3)
    assert len(hist.train_loss) == len(hist.val_loss) == len(hist.lr) == hist.epochs_run


def test_no_early_stopping_runs_every_epoch_and_can_skip_restoring():
    model = Scalar()
    hist = train_with_validation(
        model, _const(4, 10), _const(4, 3), F.mse_loss, max_epochs=12, batch_size=4, lr=1.0,
        early_stopping_patience=None, restore_best_weights=False, device="cpu",
    )  # fmt: skip
    assert hist.epochs_run == 12 and not hist.stopped_early and not hist.restored_best
    assert float(model.w.detach()) > 8  # kept the last weights, far from the best


def test_learning_rate_is_multiplied_by_the_factor_after_patience_epochs_without_improvement():
    # a loss that does not depend on the weights: the validation loss never improves after epoch 1
    def flat(out, y):
        return (out * 0).sum() + 1.0

    hist = train_with_validation(
        Scalar(), _const(4, 0), _const(4, 0), flat, max_epochs=8, batch_size=2, lr=1e-3, lr_factor=0.3,
        lr_patience=2, early_stopping_patience=None, device="cpu",
    )  # fmt: skip
    assert hist.val_loss == [1.0] * 8
    # epoch 1 sets the best; epochs 2-3 do not improve -> reduced from epoch 4; 4-5 -> from 6; 6-7 -> from 8
    expected = [1e-3, 1e-3, 1e-3, 1e-3 * 0.3, 1e-3 * 0.3, 1e-3 * 0.09, 1e-3 * 0.09, 1e-3 * 0.027]
    assert hist.lr == pytest.approx(expected, rel=1e-12)
    assert hist.best_epoch == 1 and hist.restored_best and not hist.stopped_early
    hist_min = train_with_validation(
        Scalar(), _const(4, 0), _const(4, 0), flat, max_epochs=6, batch_size=2, lr=1e-3, lr_factor=0.5,
        lr_patience=1, min_lr=2e-4, early_stopping_patience=None, device="cpu",
    )  # fmt: skip
    assert hist_min.lr == pytest.approx([1e-3, 1e-3, 5e-4, 2.5e-4, 2e-4, 2e-4], rel=1e-12)


def test_augment_is_applied_to_training_batches_only():
    calls = []

    def augment(x):
        calls.append(x.shape[0])
        return x * 0  # the model then sees zeros during training: its weight gets no gradient

    model = Scalar(w=2.0)
    train_with_validation(
        model, _const(6, 10), _const(3, 3), F.mse_loss, max_epochs=2, batch_size=4, lr=1.0, device="cpu",
        augment=augment, early_stopping_patience=None,
    )  # fmt: skip
    assert calls == [4, 2, 4, 2]  # 6 training examples per epoch, never the 3 validation ones
    assert float(model.w.detach()) == 2.0


def test_train_model_accepts_augment_and_is_unchanged_without_it():
    torch.manual_seed(0)
    a, b = Scalar(), Scalar()
    h1 = train_model(a, _const(8, 5), F.mse_loss, epochs=3, batch_size=4, lr=0.5, device="cpu")
    h2 = train_model(b, _const(8, 5), F.mse_loss, epochs=3, batch_size=4, lr=0.5, device="cpu", augment=None)
    assert h1 == h2 and float(a.w.detach()) == float(b.w.detach())
    c = Scalar()
    train_model(
        c, _const(8, 5), F.mse_loss, epochs=3, batch_size=4, lr=0.5, device="cpu", augment=lambda x: 0 * x
    )
    assert float(c.w.detach()) == 0.0


def test_same_seed_same_history():
    def run():
        torch.manual_seed(1)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        g = torch.Generator().manual_seed(0)
        x, y = torch.randn(20, 3, generator=g), torch.randint(0, 2, (20,), generator=g)
        return train_with_validation(
            net, (x[:14], y[:14]), (x[14:], y[14:]), F.cross_entropy, max_epochs=4, batch_size=5, lr=1e-2,
            seed=7, device="cpu", early_stopping_patience=None,
        )  # fmt: skip

    assert run() == run()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"max_epochs": -1}, "max_epochs"),
        ({"lr_factor": 1.0}, "lr_factor"),
        ({"lr_patience": -2}, "lr_patience"),
        ({"early_stopping_patience": 1.5}, "early_stopping_patience"),
        ({"batch_size": 0}, "batch_size"),
        ({"lr": 0.0}, "lr must"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    args = {"max_epochs": 1, **kwargs}
    with pytest.raises(ValueError, match=match):
        train_with_validation(Scalar(), _const(2, 0), _const(2, 0), F.mse_loss, device="cpu", **args)


def test_empty_validation_set_is_refused():
    with pytest.raises(ValueError, match="validation_data"):
        train_with_validation(Scalar(), _const(2, 0), _const(0, 0), F.mse_loss, max_epochs=1, device="cpu")
