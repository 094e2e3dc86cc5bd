"""The README stays true: its parameter table and its setup commands."""

import pathlib
import re

from dgbdt.params.table import params_table_markdown

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_parameter_table_is_current():
    text = README.read_text()
    start = text.index("<!-- params-table-start -->\n") + len("<!-- params-table-start -->\n")
    end = text.index("<!-- params-table-end -->")
    assert text[start:end].strip() == params_table_markdown().strip(), (
        "README parameter table is stale: regenerate it from dgbdt.params.table.params_table_markdown()"
    )


def test_ci_runs_the_readme_test_command():
    text = README.read_text()
    commands = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)
    test_command = next(c for c in commands if "pytest" in c)
    ci = (README.parent / ".ci" / "run").read_text()
    assert test_command in ci


def test_the_readme_objective_constraint_sampling_and_ranking_examples_run():
    import re

    text = README.read_text()
    for title in (
        "## Objectives and metrics",
        "## Constraints and split regularisation",
        "## Sampling: GOSS and balanced bagging",
        "## Learning to rank",
        "## Explain and inspect",
        "## On a Dask cluster",
    ):
        section = text[text.index(title) :]
        section = section[: section.index("\n## ", 1)]
        blocks = re.findall(r"```python\n(.*?)\n```", section, flags=re.S)
        assert blocks, title
        for code in blocks:
            exec(compile(code, f"README.md, {title[3:]}", "exec"), {})
