"""The page's clamp step, run when a slider is released, before any figure redraws.

Given the released slider's raw value (a number typed into its box, or null), the value of the
slider its maximum comes from (`max_from`, if any), and for each slider that follows it (whose
maximum is this one's value plus an offset) that follower's value and the maximum the page
shows for it now, the step returns:
  - this slider's value: the nearest allowed one (Slider.clamp; at most its linked maximum);
  - per follower, gr.update(maximum=its new maximum, value=...): a follower that was at its
    shown maximum stays at its maximum when that grows (a step slider showing the whole run
    keeps doing so); otherwise it keeps its value, clamped to the new maximum;
  - the note: gr.update(value=text, visible=bool(text)), the text saying what changed.

Two implementations held equal by tests/e2e/test_clamp_js.py (hypothesis, in chromium):
`clamp_reference` is the specification in Python (Slider.clamp). `clamp_js` is what the page
runs: the same rules in JavaScript (PAGE_LIB, loaded once with the page), called with each
slider's declaration, in the browser, with no round trip to the server. Every Gradio event
that reaches the server refreshes the loading state of every component the page has used
(Gradio 6's frontend), so an event that stays in the browser saves a server round trip plus
two of those passes.

The note's numbers are printed as Python's f"{x:.10g}". The JavaScript rounds a tie in the
10th significant digit up where Python rounds it to even, so for typed values above 1e9 a note
may differ in its last digit; the values set never differ.
"""

from __future__ import annotations

import json

import gradio as gr

from tabs.controls import Slider


def clamp_reference(c: Slider, source: Slider | None, followers: tuple[Slider, ...]):
    """(raw, [source value], *followers' values, *followers' shown maxima) -> this slider's
    value, one gr.update per follower, the note's gr.update."""
    def handle(raw: object, *rest: object) -> list[object]:
        top = None
        if source is not None:
            top = c.max_given(source.clamp(rest[0])[0])
            rest = rest[1:]
        values, shown = rest[:len(followers)], rest[len(followers):]
        value, note = c.clamp(raw, top)
        out: list[object] = [value]
        for d, cur, was in zip(followers, values, shown, strict=True):
            d_top = d.max_given(value)
            at_max = was is not None and d.clamp(cur)[0] >= was
            out.append(gr.update(maximum=d_top, value=d_top if at_max else d.clamp(cur, d_top)[0]))
        out.append(gr.update(value=note, visible=bool(note)))
        return out

    return handle


def _spec(c: Slider) -> dict:
    return {"name": c.name, "min": c.minimum, "max": c.maximum, "value": c.value,
            "step": c.step, "integer": c.integer, "offset": c.max_offset}


# Slider.clamp, Slider.max_given and controls._num in JavaScript.
_LIB = r"""
const evenRound = (x) => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));
const num = (x) => {  // Python's f"{x:.10g}"
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  const [m, ex] = x.toExponential(9).split('e');
  const e = Number(ex);
  if (e < -4 || e >= 10) {
    const digits = String(Math.abs(e)).padStart(2, '0');
    return `${strip(m)}e${e < 0 ? '-' : '+'}${digits}`;
  }
  return strip(x.toFixed(9 - e));
};
const repr = (raw) => {
  if (raw === null || raw === undefined) return 'None';
  if (typeof raw === 'boolean') return raw ? 'True' : 'False';
  if (typeof raw === 'string') return `'${raw}'`;
  return num(raw);
};
const typed = (c, x) => (c.integer ? evenRound(x) : x);
const maxGiven = (c, source) => Math.min(c.max, source + c.offset);
const clamp = (c, raw, top) => {
  const hi = top === null ? c.max : Math.min(c.max, top);
  const x = typeof raw === 'number' ? raw
    : (typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN);
  if (!Number.isFinite(x))
    return [typed(c, c.value),
            `${c.name} ${repr(raw)} is not a number: set to its default ${num(c.value)}`];
  if (x > hi)
    return [typed(c, hi), `${c.name} ${num(x)} is above its maximum ${num(hi)}: set to ${num(hi)}`];
  if (x < c.min)
    return [typed(c, c.min),
            `${c.name} ${num(x)} is below its minimum ${num(c.min)}: set to ${num(c.min)}`];
  const k = evenRound((x - c.min) / c.step);
  const v = Math.min(Number((c.min + k * c.step).toFixed(9)), hi);
  if (Math.abs(v - x) > 1e-9)
    return [typed(c, v), `${c.name} ${num(x)} is between the slider's steps of ${num(c.step)}: `
                         + `set to ${num(v)}`];
  return [typed(c, v), ''];
};
const step = (S, raw, rest, shown) => {
  let top = null;
  if (S.source !== null) {
    top = maxGiven(S.c, clamp(S.source, rest[0], null)[0]);
    rest = rest.slice(1);
  }
  const [value, note] = clamp(S.c, raw, top);
  const out = [value];
  S.followers.forEach((d, j) => {
    const dTop = maxGiven(d, value);
    const atMax = shown[j] !== null && clamp(d, rest[j], null)[0] >= shown[j];
    out.push({__type__: 'update', maximum: dTop,
              value: atMax ? dTop : clamp(d, rest[j], dTop)[0]});
  });
  out.push({__type__: 'update', value: note, visible: note !== ''});
  return out;
};
"""


def _spec_json(c: Slider, source: Slider | None, followers: tuple[Slider, ...]) -> str:
    return json.dumps({"c": _spec(c), "source": _spec(source) if source else None,
                       "followers": [_spec(d) for d in followers]})


def clamp_js_core(c: Slider, source: Slider | None, followers: tuple[Slider, ...]) -> str:
    """A JS function (raw, rest, shown) -> what clamp_reference returns for
    (raw, *rest, *shown): the part the tests compare, built from the same _LIB as the page's."""
    return f"(raw, rest, shown) => {{ const S = {_spec_json(c, source, followers)};{_LIB}" \
           "return step(S, raw, rest, shown); }"


# The page's copy of _LIB, loaded once with the page (app.py PAGE_JS), so each slider's event
# carries only its spec: window.labClamp(spec, follower ids, raw, rest).
PAGE_LIB = f"""() => {{{_LIB}
window.labClamp = (S, ids, raw, rest) => {{
  const shown = ids.map((id) => {{
    const r = document.querySelector(`#${{id}} input[type=range]`);
    return r ? Number(r.max) : null; }});
  return step(S, raw, rest, shown);
}};
}}"""


def clamp_js(c: Slider, source: Slider | None, followers: tuple[Slider, ...],
             follower_ids: tuple[str, ...]) -> str:
    """The page's clamp: a Gradio `js=` function of (raw, [source value], *followers' values)
    that reads each follower's shown maximum from its range input (elem ids follower_ids),
    through PAGE_LIB."""
    return (f"(raw, ...rest) => window.labClamp({_spec_json(c, source, followers)}, "
            f"{json.dumps(list(follower_ids))}, raw, rest)")
