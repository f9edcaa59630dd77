"""Issue 53, item 4: ``reproduce`` says how far its sweep is, one line per finished spec, when no bar shows."""

from primaldual.reproduce import spec_lines


def test_one_line_per_finished_spec_naming_its_set_and_seed():
    lines = []
    line = spec_lines(3, lines.append)
    line({"spec": {"label": "small20", "preset": "small", "seed": 7, "restart_cost": 0.1}})
    line({"spec": {"preset": "tiny", "seed": 2}})
    assert len(lines) == 2
    assert "spec 1 of at most 3" in lines[0] and "small20" in lines[0] and "seed 7" in lines[0]
    assert "restart cost 0.1" in lines[0]
    assert "spec 2 of at most 3" in lines[1] and "tiny" in lines[1] and "restart cost 0" in lines[1]
