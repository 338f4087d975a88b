import numpy as np
import pytest
import torch

from medeval.models.backbones import BACKBONES, build_backbone
from medeval.models.device import (
    autocast,
    dataloader_kwargs,
    grad_scaler,
    prepare_batch,
    prepare_model,
    resolve_device,
)
from medeval.models.multilabel_cnn import MultiLabelCNN
from medeval.models.training import predict, train_model


def test_auto_device_and_clear_error_without_cuda():
    dev = resolve_device("auto")
    assert dev.type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")


def test_gpu_helpers_are_noops_on_cpu():
    cpu = torch.device("cpu")
    with autocast(cpu):
        y = torch.ones(2, 2) @ torch.ones(2, 2)
    assert y.dtype == torch.float32
    assert not grad_scaler(cpu).is_enabled()
    x = torch.zeros(1, 1, 8, 8)
    assert prepare_batch(x, cpu).is_contiguous()
    assert dataloader_kwargs(cpu)["num_workers"] == 0
    model = prepare_model(torch.nn.Conv2d(1, 1, 3), cpu)
    assert next(model.parameters()).device.type == "cpu"


@pytest.mark.parametrize("name,size", [("small_cnn", 32), ("resnet18", 64), ("resnet50", 64)])
def test_backbone_shapes(name, size):
    net = build_backbone(name, in_channels=1).eval()
    with torch.no_grad():
        out = net(torch.zeros(2, 1, size, size))
    assert out.shape == (2, net.out_channels, size // net.stride, size // net.stride)


def test_unknown_backbone_and_local_weights(tmp_path):
    with pytest.raises(ValueError, match="unknown backbone 'vgg'"):
        build_backbone("vgg")
    rgb = build_backbone("resnet18", in_channels=3)
    path = tmp_path / "w.pt"
    torch.save(rgb.state_dict(), path)
    gray = build_backbone("resnet18", in_channels=1, weights_path=path)
    assert torch.allclose(gray.conv1.weight, rgb.conv1.weight.sum(1, keepdim=True))
    assert torch.equal(gray.layer4[1].conv2.weight, rgb.layer4[1].conv2.weight)
    with pytest.raises(FileNotFoundError, match="weights_path"):
        build_backbone("resnet18", weights_path=tmp_path / "missing.pt")
    assert set(BACKBONES) == {"small_cnn", "resnet18", "resnet50"}


def test_cam_spatial_mean_plus_bias_equals_logits():
    torch.manual_seed(0)
    model = MultiLabelCNN(3).eval()
    x = torch.rand(2, 1, 32, 32)
    with torch.no_grad():
        logits = model(x)
        cams = model.class_activation_maps(x, upsample=False)
        assert model.class_activation_maps(x).shape == (2, 3, 32, 32)
    torch.testing.assert_close(cams.mean(dim=(2, 3)) + model.classifier.bias, logits, rtol=1e-5, atol=1e-5)


def test_training_loop_learns_and_is_reproducible_on_cpu():
    rng = np.random.default_rng(0)
    x = rng.random((64, 1, 16, 16)).astype(np.float32)
    y = (x[:, :, :8].mean(axis=(1, 2, 3)) > x[:, :, 8:].mean(axis=(1, 2, 3))).astype(np.float32)[:, None]

    def run():
        torch.manual_seed(0)
        model = MultiLabelCNN(1)
        loss = torch.nn.BCEWithLogitsLoss()
        hist = train_model(model, (x, y), lambda out, t: loss(out, t), epochs=3, batch_size=16, lr=1e-2,
                           device="auto", seed=1, amp=True)
        return hist, predict(model, x, batch_size=32, device="auto")

    h1, p1 = run()
    h2, p2 = run()
    assert h1[-1] < h1[0]
    assert h1 == h2 and np.array_equal(p1, p2)
    assert p1.shape == (64, 1)


def test_prefetch_keeps_order_and_reraises():
    from medeval.models.device import prefetch

    assert list(prefetch(iter(range(50)), 3)) == list(range(50))
    assert list(prefetch(range(5), 0)) == list(range(5))

    def broken():
        yield 1
        raise OSError("slide unreadable")

    it = prefetch(broken(), 2)
    assert next(it) == 1
    with pytest.raises(OSError, match="slide unreadable"):
        next(it)
    with pytest.raises(ValueError, match="depth"):
        list(prefetch([], -1))
    # abandoning the consumer stops the producer thread
    gen = prefetch(iter(range(10**6)), 2)
    assert next(gen) == 0
    gen.close()


def test_limit_cpu_threads_sets_one_thread_on_the_cpu():
    import torch

    from medeval.models.device import limit_cpu_threads

    before = torch.get_num_threads()
    try:
        assert limit_cpu_threads("cpu", 1).type == "cpu"
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
