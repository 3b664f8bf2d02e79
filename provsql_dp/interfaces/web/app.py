"""The explorer's web application (Starlette): pages, sign-in, the JSON API, security headers.

``create_app(database)`` returns the ASGI application; ``serve`` runs it on uvicorn (bound to
127.0.0.1 unless told otherwise). Every ``/api`` endpoint needs a signed-in session; every
``POST`` needs the session's CSRF token in ``X-CSRF-Token``; ``/api/curator/…`` needs the curator
role (an analyst gets 403 and nothing runs). Errors come back as ``{"error": "Error: …"}`` with
the engine's own text (:func:`.engine.error_text`): a body of the wrong shape (:func:`body_problem`)
or a PEP 249 error is a 400, never a 500 (a 500 is an internal error of ours).

>>> app = create_app(":memory:")
>>> sorted(r.path for r in app.routes if r.path.startswith("/api/curator"))[:2]
['/api/curator/declare', '/api/curator/histogram']
"""

from __future__ import annotations

import functools
import math
import secrets
from importlib import resources
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...errors import Error, ProgrammingError
from ..._deadline import RELEASE_TIME_LIMIT
from ...provenance.capture import DEFAULT_MAX_ROWS
from . import accounts, analyst, charting, csrf, curator, history
from .engine import Engine, error_text
from .login_limits import LoginLimits

__all__ = ["create_app", "serve", "SESSION_COOKIE"]

SESSION_COOKIE = "pdp_session"
STATIC = resources.files("provsql_dp.interfaces.web") / "static"
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}


def _page(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _json_error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


#: request fields that name things or hold text: a string (or null) wherever they appear
STRING_FIELDS = frozenset({"action", "as", "by", "column", "column2", "graph", "mode", "name",
                           "query", "sql", "table", "template", "user"})
#: the largest magnitude of a number in a request (ε, bounds, bins…): beyond it, a typo
MAX_NUMBER = 1e15


def _scalar_problem(key: str, v) -> str | None:
    if v is None or isinstance(v, (bool, str)):
        return None
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return f"the field {key!r} must be a finite number"
        if abs(v) > MAX_NUMBER:
            return f"the field {key!r} is out of range (at most {MAX_NUMBER:g} in magnitude)"
        return None
    return f"the field {key!r} must be a string, a number, true/false or null"


def body_problem(body: dict) -> str | None:
    """What is wrong with a request body's shape (None: nothing): every field is a JSON scalar —
    a finite number within ±:data:`MAX_NUMBER` — or a list of them, and the fields of
    :data:`STRING_FIELDS` are strings. Checked before any handler runs, so an odd body is a 400
    naming the field, never an internal error.

    >>> body_problem({"sql": "SELECT 1", "epsilon": 0.5, "thetas": [1, 2]}) is None
    True
    >>> body_problem({"name": 3})
    "the field 'name' must be a string"
    >>> body_problem({"epsilon": float("nan")})
    "the field 'epsilon' must be a finite number"
    """
    for key, v in body.items():
        if key in STRING_FIELDS and v is not None and not isinstance(v, str):
            return f"the field {key!r} must be a string"
        values = v if isinstance(v, list) else [v]
        for x in values:
            problem = _scalar_problem(key, x)
            if problem is not None:
                return problem
    return None


def api(role: str | None = None):
    """Decorate an endpoint ``fn(request, session, body)``: session, CSRF, role, errors as JSON."""
    def wrap(fn):
        @functools.wraps(fn)
        async def endpoint(request: Request):
            sess = request.app.state.sessions.get(request.cookies.get(SESSION_COOKIE))
            if sess is None:
                return _json_error("Error: not signed in (sign in again at /login)", 401)
            if request.method == "POST" and not csrf.same(sess.csrf, request.headers.get(csrf.HEADER)):
                return _json_error(f"Error: {csrf.REFUSED}", 403)
            if role is not None and sess.role != role:
                return _json_error(f"Error: this is for the {role} only; you are signed in as {sess.role} "
                                   f"{sess.user!r}", 403)
            body = {}
            if request.method == "POST":
                try:
                    body = await request.json()
                except ValueError:
                    return _json_error("Error: the request body must be JSON", 400)
                if not isinstance(body, dict):
                    return _json_error("Error: the request body must be a JSON object", 400)
                problem = body_problem(body)
                if problem is not None:
                    return _json_error(f"Error: {problem}", 400)
            from starlette.concurrency import run_in_threadpool
            try:
                out = await run_in_threadpool(fn, request, sess, body)
            except Error as e:
                return _json_error(error_text(e), 400)
            except Exception as e:  # noqa: BLE001 - one fixed message; details to the log
                return _json_error(error_text(e), 500)
            return JSONResponse(out, headers=HEADERS)
        return endpoint
    return wrap


# ---------------------------------------------------------------- pages and sign-in
async def index(request: Request):
    if request.app.state.sessions.get(request.cookies.get(SESSION_COOKIE)) is None:
        return RedirectResponse("/login", status_code=303)
    return HTMLResponse(_page("index.html"), headers=HEADERS)


def _login_page(token: str, message: str = "", status: int = 200) -> HTMLResponse:
    html = _page("login.html").replace("{{token}}", token).replace("{{message}}", message)
    r = HTMLResponse(html, status_code=status, headers=HEADERS)
    r.set_cookie(csrf.LOGIN_COOKIE, token, httponly=True, samesite="strict", path="/login")
    return r


async def login_form(request: Request):
    return _login_page(secrets.token_urlsafe(32))


async def login(request: Request):
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    get = lambda k: (form.get(k) or [""])[0]  # noqa: E731
    if not csrf.same(request.cookies.get(csrf.LOGIN_COOKIE), get("token")):
        return _login_page(secrets.token_urlsafe(32), csrf.REFUSED, 403)
    app = request.app
    from starlette.concurrency import run_in_threadpool

    def check():
        return accounts.verify(app.state.engine.duck, get("user"), get("password"))
    client = request.client.host if request.client is not None else ""
    wait = app.state.login_limits.begin(client, get("user"))
    if wait is not None:  # too many failures of this client or name: no hashing (login_limits)
        r = _login_page(secrets.token_urlsafe(32), "Sign-in refused: too many attempts; try again "
                        f"in {math.ceil(wait)} s.", 429)
        r.headers["Retry-After"] = str(math.ceil(wait))
        return r
    role = None
    try:
        role = await run_in_threadpool(check)
    finally:
        app.state.login_limits.end(client, get("user"), ok=role is not None)
    if role is None:
        return _login_page(secrets.token_urlsafe(32), "Sign-in failed: unknown account or wrong password.", 401)
    token, _ = app.state.sessions.open(get("user"), role)
    r = RedirectResponse("/", status_code=303)
    r.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", max_age=accounts.SESSION_SECONDS)
    r.delete_cookie(csrf.LOGIN_COOKIE, path="/login")
    return r


@api()
def logout(request, sess, body):
    request.app.state.sessions.close(request.cookies.get(SESSION_COOKIE))
    return {"ok": True}


@api()
def me(request, sess, body):
    return {"user": sess.user, "role": sess.role, "csrf": sess.csrf}


# ---------------------------------------------------------------- the API
def _engine(request) -> Engine:
    return request.app.state.engine


@api("curator")
def c_overview(request, sess, body):
    return curator.overview(_engine(request), sess.user)


@api("curator")
def c_declare(request, sess, body):
    return curator.declare(_engine(request), sess.user, body)


@api("curator")
def c_histogram(request, sess, body):
    return curator.histogram(_engine(request), sess.user, body)


@api("curator")
def c_policy_graph(request, sess, body):
    return curator.declared_graph(_engine(request), sess.user, body)


@api("curator")
def c_tradeoff(request, sess, body):
    return curator.tradeoff(body)


@api()
def a_catalog(request, sess, body):
    return analyst.catalog(_engine(request), sess.role, sess.user)


@api()
def a_query(request, sess, body):
    return analyst.ask(_engine(request), sess.role, sess.user, body)


@api()
def a_budget(request, sess, body):
    return analyst.budget(_engine(request), sess.role, sess.user)


@api()
def a_history(request, sess, body):
    eng = _engine(request)
    return {"entries": history.entries(eng.duck, sess.user)}


@api()
def a_history_entry(request, sess, body):
    eng = _engine(request)
    try:
        entry_id = int(request.path_params["entry"])
    except ValueError:
        raise ProgrammingError("a history entry is named by its number") from None
    entry = history.get(eng.duck, sess.user, entry_id)
    if entry is None:
        raise ProgrammingError(f"you have no history entry {entry_id}")
    return entry


async def chart_library(request: Request):
    """Vega, Vega-Lite and vega-embed from the installed vl-convert-python (see :mod:`.charting`)."""
    from starlette.concurrency import run_in_threadpool

    text = await run_in_threadpool(charting.bundle)
    tag = charting.etag()
    headers = {"ETag": tag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if request.headers.get("if-none-match") == tag:
        return Response(status_code=304, headers=headers)
    return Response(text, media_type="text/javascript; charset=utf-8", headers=headers)


@api()
def cancel(request, sess, body):
    return {"cancelled": _engine(request).cancel(sess.user)}


def create_app(database: str, max_capture_rows: int | None = DEFAULT_MAX_ROWS,
               release_seconds: float | None = None, lp_gap: float | None = None,
               release_time_limit: float | None = RELEASE_TIME_LIMIT, engine: Engine | None = None,
               **options) -> Starlette:
    """The explorer over ``database`` (a DuckDB file; accounts are stored in it).
    ``max_capture_rows``, ``release_seconds``, ``lp_gap``, ``release_time_limit`` and ``options``
    (the guard rails' ``memory_limit``/``temp_directory_limit``, ``max_statement_bytes``,
    ``max_expression_depth``; every connection has the guard rails) apply to every connection
    it opens (:func:`provsql_dp.connect`); statements run concurrently, each on a connection of
    its own (:class:`~.engine.Engine`)."""
    charting.require()  # the charts' library: a clear ImportError now rather than blank charts later
    routes = [
        Route("/", index), Route("/login", login_form, methods=["GET"]), Route("/login", login, methods=["POST"]),
        Route("/api/logout", logout, methods=["POST"]), Route("/api/me", me),
        Route("/api/curator/overview", c_overview), Route("/api/curator/declare", c_declare, methods=["POST"]),
        Route("/api/curator/histogram", c_histogram, methods=["POST"]),
        Route("/api/curator/tradeoff", c_tradeoff, methods=["POST"]),
        Route("/api/curator/policy_graph", c_policy_graph, methods=["POST"]),
        Route("/api/catalog", a_catalog), Route("/api/query", a_query, methods=["POST"]),
        Route("/api/budget", a_budget), Route("/api/history", a_history),
        Route("/api/history/{entry}", a_history_entry), Route("/api/cancel", cancel, methods=["POST"]),
        Route(charting.ROUTE, chart_library),
        Mount("/static", StaticFiles(packages=[("provsql_dp.interfaces.web", "static")]), name="static"),
    ]
    app = Starlette(routes=routes)
    # ``options``: the guard rails' limits (provsql-dp serve flags), for an engine made here
    app.state.engine = engine or Engine(database, max_capture_rows, release_seconds, lp_gap,
                                        release_time_limit, **options)
    app.state.sessions = accounts.Sessions()
    app.state.login_limits = LoginLimits()  # failed sign-ins: backoff per client and name
    return app


def serve(database: str, host: str = "127.0.0.1", port: int = 8765,
          max_capture_rows: int | None = DEFAULT_MAX_ROWS, release_seconds: float | None = None,
          lp_gap: float | None = None, release_time_limit: float | None = RELEASE_TIME_LIMIT,
          engine: Engine | None = None, **options) -> None:
    """Run the explorer on uvicorn until interrupted (on ``engine`` when given: the one the wire
    server shares, :mod:`provsql_dp.interfaces.pgwire`; ``options``: :func:`create_app`'s)."""
    import uvicorn

    uvicorn.run(create_app(database, max_capture_rows, release_seconds, lp_gap, release_time_limit,
                           engine, **options),
                host=host, port=port,
                log_level="info")
