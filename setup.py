"""The wheel carries the built web page (``clients/web/dist``), so that ``pip install`` of it and ``parsimonia
serve`` serve the page without Node. A wheel is refused, with one line saying what to run, when the page is not
built; an editable install (``make run``'s first step, before the page is built) does not need it."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup  # type: ignore[import-untyped]
from setuptools.command.bdist_wheel import bdist_wheel  # type: ignore[import-untyped]

PAGE = Path(__file__).resolve().parent / "clients" / "web" / "dist" / "index.html"


class WheelWithPage(bdist_wheel):  # type: ignore[misc]  # untyped base
    def run(self) -> None:
        if not PAGE.is_file():
            raise SystemExit(f"error: the web page is not built ({PAGE} is missing): run `make web` (Node 20+ and "
                             "npm) before building the wheel")
        super().run()


setup(cmdclass={"bdist_wheel": WheelWithPage})
