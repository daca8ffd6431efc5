"""Reproductions that regenerate (``dcnsim reproduce``): each study of the source documents,
and our own, run on today's engine by one command into a results file under docs/results/;
the docs' tables rendered from those files; a check that fails when the docs differ from
what the results render or when a model change has moved a study since its results were
made. See docs/reproductions.md, "How these numbers are made"."""

from .core import Case, Study, repo_root, results_path
from .render import check_docs, render, render_block
from .runner import adopt_added_outputs, check, fingerprints, mark_stale, reproduce
from .studies import BLOCKS, STUDIES

__all__ = [
    "BLOCKS", "Case", "STUDIES", "Study", "adopt_added_outputs", "check", "check_docs", "fingerprints", "mark_stale", "render",
    "render_block", "repo_root", "reproduce", "results_path",
]
