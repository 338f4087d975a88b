from medeval.cli import main


def test_params_prints_schema(capsys):
    assert main(["params", "A2-rerun"]) == 0
    assert "n_repeats" in capsys.readouterr().out


def test_unknown_chapter_profile_parameter_exit_2_with_choices(capsys):
    assert main(["run", "no-such-chapter"]) == 2
    assert "valid chapters:" in capsys.readouterr().err
    assert main(["run", "A2-rerun", "--profile", "huge"]) == 2
    assert "valid profiles: smoke, default, gpu, full" in capsys.readouterr().err
    assert main(["run", "A2-rerun", "--set", "epochs=3"]) == 2
    assert "unknown parameter 'epochs'" in capsys.readouterr().err
    assert main(["run", "A2-rerun", "--set", "n_repeats=1"]) == 2
    assert "'n_repeats' = 1" in capsys.readouterr().err


def test_chapters_lists_registry(capsys):
    assert main(["chapters"]) == 0
    assert "A2-rerun" in capsys.readouterr().out
