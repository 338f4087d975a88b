"""Self-check questions on a chapter page: jupyterquiz, offline, drawn once MathJax has typeset the page.

:func:`self_check` validates the questions and fixes their answers' order (:mod:`medeval.runtime.teaching`), embeds
them in the page (no server, no network) and makes jupyterquiz's script wait for MathJax
(``_WAIT_FOR_MATHJAX``), which it would otherwise fetch from a CDN.
"""

from __future__ import annotations

_WAIT_FOR_MATHJAX = """
// medeval: show the questions only once MathJax has typeset the page. Until MathJax 3 has loaded, window.MathJax
// is the book's configuration object; jupyterquiz, finding no MathJax.typeset there, would fetch MathJax from a CDN.
function medevalWhenMathJaxReady(run, waited) {
  var mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(run);
  } else if (mj && mj.Hub) {
    run();  // MathJax 2 (the classic notebook): jupyterquiz queues its typesetting itself
  } else if ((mj || document.readyState !== "complete") && (waited || 0) < 10000) {
    setTimeout(function () { medevalWhenMathJaxReady(run, (waited || 0) + 100); }, 100);
  } else {
    run();  // no MathJax on this page (a notebook without it), or it never started: show the questions anyway
  }
}
"""


_QUIZ_INVOCATION = "{\n  try_show();\n}"  # the end of jupyterquiz's static_suffix.js.tpl


def self_check(questions: list[dict]) -> None:
    """Show self-check questions (multiple choice or numeric, with feedback) that work in the offline book.

    The questions are checked by :func:`medeval.runtime.teaching.validate_self_check`, their answers put in a
    fixed shuffled order (:func:`medeval.runtime.teaching.shuffled_answers`) and embedded in the page with
    jupyterquiz, so answering them needs no server and no network. The quiz is drawn once MathJax has typeset the
    page (``MathJax.startup.promise``), never before: jupyterquiz would otherwise load MathJax from a CDN.
    """
    from unittest import mock

    import jupyterquiz.dynamic.display as quiz_display
    from IPython.display import Javascript, display

    from medeval.runtime.teaching import shuffled_answers, validate_self_check

    shown: list = []
    with mock.patch.object(quiz_display, "display", lambda *objs: shown.extend(objs)):
        quiz_display.display_quiz(
            shuffled_answers(validate_self_check(questions)), shuffle_answers=False, max_width=760,
            colors={"--jq-multiple-choice-bg": "#0072B2", "--jq-numeric-bg": "#0072B2",
                    "--jq-correct-color": "#009E73", "--jq-incorrect-color": "#D55E00"})
    for obj in shown:
        if isinstance(obj, Javascript):
            if obj.data.count(_QUIZ_INVOCATION) != 1:
                raise RuntimeError("jupyterquiz's script no longer ends with try_show(); self_check cannot make it "
                                   "wait for MathJax (was jupyterquiz upgraded?)")
            obj = Javascript(_WAIT_FOR_MATHJAX + obj.data.replace(
                _QUIZ_INVOCATION, "{\n  medevalWhenMathJaxReady(try_show);\n}"))
        display(obj)
