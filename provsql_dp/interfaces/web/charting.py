"""The explorer's charting library: Vega, Vega-Lite and vega-embed, served from the installed package.

The explorer draws its charts with Vega-Lite (and Vega for the policy graph) in the browser. The
JavaScript comes from ``vl-convert-python`` (the Vega team's converter, a PyPI wheel that embeds
Vega, Vega-Lite and vega-embed): :func:`bundle` asks it for its offline bundle once per process
and the server sends it at :data:`ROUTE`. Nothing is fetched from a CDN, so the explorer works on
a machine without network.

The bundle runs under the explorer's strict Content-Security-Policy (no ``'unsafe-eval'``, no
``'unsafe-inline'``) because the page embeds every chart with ``ast: true`` (vega-embed then
evaluates Vega expressions with its bundled interpreter, never with ``new Function``),
``defaultStyle: false`` and a tooltip handler with ``disableDefaultStyle`` (no ``<style>``
element is injected: their rules are in ``static/style.css``). The bundle is wrapped in a
function so that its minified top-level names stay out of the page's global scope; it sets
``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``.

>>> text = bundle()
>>> text.startswith("(function () {") and "window.vegaEmbed=" in text
True
"""

from __future__ import annotations

import functools
import hashlib

__all__ = ["ROUTE", "bundle", "etag", "require"]

ROUTE = "/lib/vega-bundle.js"

MISSING = ("the explorer draws its charts with Vega-Lite from the vl-convert-python package, which is "
           "not installed: pip install 'provsql_dp[web]' (or pip install vl-convert-python)")


def require():
    """The ``vl_convert`` module, or ImportError saying how to install it."""
    try:
        import vl_convert
    except ImportError as e:
        raise ImportError(MISSING) from e
    return vl_convert


@functools.cache
def bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, no network needed (about 0.9 MB, made once)."""
    return "(function () {\n" + require().javascript_bundle() + "\n})();\n"


@functools.cache
def etag() -> str:
    """A strong validator of :func:`bundle` (it changes only when vl-convert-python does)."""
    return '"' + hashlib.sha256(bundle().encode("utf-8")).hexdigest()[:32] + '"'
