"""Golden set (golden drafts → **review** → dataset): the review web app behind ``tuner golden review``: FastAPI on
127.0.0.1, pages rendered on the server with the stylesheet and script (package files, ``static/review.css`` and
``static/review.js``) inline (no outside asset: it works offline), one case or conflict candidate at a time.

Pages: ``GET /`` (the first row not yet reviewed), ``GET /case/{id}``, ``GET /step/{id}?dir=next|back`` (the
neighbour within the status filter). API: ``POST /api/cases/{id}`` (``version`` plus an ``action`` and/or edited
fields, :class:`tuner.golden.Edit`: an unknown key or a wrong type is a 422 naming it; 409 when the version is stale),
``GET /api/search?q=TEXT&k=N`` (chunks of the whole knowledge base: ``[{rank, chunk_id, doc_id, title, text}]``), ``GET /api/progress``, ``POST /api/export``. Every write needs the run's token
(the page carries it), JSON and no foreign ``Origin``, and every request a loopback ``Host``; a body over 4 MB gets 413,
one nested deeper than 64 levels 400, as a malformed one (:mod:`tuner.http_guard`).
"""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from importlib.resources import files
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import ValidationError

from tuner.errors import DatasetError, StaleVersion, UserError
from tuner.golden._draft import CASES, STATUSES, DraftCase, DraftConflict, DraftRow, validation_problem
from tuner.golden._pool import SEARCH_DEPTH, embedding_model
from tuner.golden._review import Edit, Export, ReviewStore, highlight
from tuner.http_guard import LOOPBACK_NAMES, TOKEN_HEADER, BodyGuard, WriteGuard, new_token
from tuner.text import detect_language, is_blank, plural

FILTERS = ("all", *STATUSES)
UI_LANGUAGES = ("en", "zh")

_TRANSLATIONS: dict[str, tuple[str, str]] = {
    "title": ("Golden set review", "黄金集审核"),
    "question": ("Question", "问题"),
    "pool": ("Candidate chunks: check the ones that answer the question", "候选片段：勾选能回答问题的片段"),
    "answer": ("Reference answer", "参考答案"),
    "keypoints": ("Keypoints: one per line, aliases separated by |", "要点：每行一个，同义表述用 | 分隔"),
    "accept": ("Accept", "通过"),
    "reject": ("Reject", "拒绝"),
    "skip": ("Skip", "跳过"),
    "no_answer": ("No answer in the knowledge base", "知识库中无答案"),
    "search": ("Not in the candidates? Search the whole knowledge base", "候选中没有？搜索整个知识库"),
    "search_go": ("Search", "搜索"),
    "search_both": ("Search: BM25 and dense retrieval", "搜索：BM25 与稠密检索"),
    "search_bm25": ("Search: BM25 only ({model} does not cover this knowledge base's language, {language})",
                    "搜索：仅 BM25（{model} 不支持该知识库的语言：{language}）"),
    "search_none": ("Nothing found", "未找到"),
    "by_search": ("found by search", "通过搜索找到"),
    "back": ("Back", "上一条"),
    "next": ("Next", "下一条"),
    "reopen": ("Reopen", "重新打开"),
    "export": ("Export accepted", "导出已通过"),
    "filter": ("Show", "显示"),
    "reviewed": ("reviewed", "已审核"),
    "status": ("Status", "状态"),
    "saved": ("Saved", "已保存"),
    "stale": ("Not saved: this case was changed in another tab or window. Reload the page to see the current version.",
              "未保存：该条目已在其他标签页或窗口中被修改。请刷新页面查看最新版本。"),
    "failed": ("Not saved", "未保存"),
    "done": ("Nothing left to review in this view.", "此视图中没有待审核的条目。"),
    "keys": ("Keys: a accept · r reject · x no answer · s skip · b/← back · n/→ next · 1–9 check a chunk · e answer · k keypoints · "
             "/ search · Esc leave a field",
             "快捷键：a 通过 · r 拒绝 · x 无答案 · s 跳过 · b/← 上一条 · n/→ 下一条 · 1–9 勾选片段 · e 参考答案 · k 要点 · / 搜索 · Esc 离开输入框"),
    "candidate": ("Candidate (contradicting or older)", "候选（矛盾或较旧的文档）"),
    "original": ("Conflicts with", "与之矛盾的文档"),
    "kind": ("Kind", "类型"),
    "wrong": ("Wrong values", "错误值"),
    "found": ("found in chunks", "出现在片段"),
    "none": ("not in any chunk", "未出现在任何片段中"),
    "all": ("all", "全部"),
    "pending": ("pending", "待审核"),
    "accepted": ("accepted", "已通过"),
    "rejected": ("rejected", "已拒绝"),
    "skipped": ("skipped", "已跳过"),
    "stratum": ("stratum", "分层"),
    "count": ("asked", "提问次数"),
    "ranks": ("ranks", "排名"),
    "language": ("中文", "English"),
    "export_failed": ("Not exported", "未导出"),
    "in_pool": ("already in the pool as candidate {n}", "已在候选池中，第 {n} 条"),
    "missing": ("(not in the knowledge base)", "（知识库中没有这篇文档）"),
    "known_bad": ("known bad", "已知坏例"),
    "head": ("head", "高频"),
    "torso": ("torso", "中频"),
    "tail": ("tail", "低频"),
    "single_hop": ("single-hop", "单跳"),
    "multi_hop": ("multi-hop", "多跳"),
    "long_tail": ("long-tail", "长尾"),
    "uncategorized": ("uncategorized", "未分类"),
    "stale_version": ("stale version", "过期版本"),
    "dated": ("dated: the older one is the candidate", "有日期：候选是较旧的一篇"),
    "undated": ("undated: which is newer is unknown", "无日期：不知哪篇较新"),
}
"""Every text of the interface: (English, Chinese); strata and categories are shown by these names too."""
TEXTS: dict[str, dict[str, str]] = {lang: {key: pair[i] for key, pair in _TRANSLATIONS.items()} for i, lang in enumerate(UI_LANGUAGES)}


def _label(value: object, texts: dict[str, str]) -> str:
    """A stratum or category as the interface names it (escaped); a name it does not know as written."""
    return _e(texts.get(str(value), str(value)))




def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


@cache
def asset(name: str) -> str:
    """The page's stylesheet or script (``review.css``, ``review.js``), package files under ``tuner/golden/static``."""
    return files("tuner.golden").joinpath("static", name).read_text("utf-8")


def _marked(segments: list[tuple[str, str]], flag_class: str | None = None) -> str:
    return "".join(f'<mark class="{flag_class or flag}">{_e(text)}</mark>' if flag else _e(text) for text, flag in segments)


def _aliases(row: DraftCase) -> list[str]:
    return [alias for keypoint in row.keypoints for alias in keypoint]


def pool_html(row: DraftCase, texts: dict[str, str]) -> str:
    """The pool of a draft case: one checkbox per chunk, question terms and keypoint aliases marked."""
    checked = set(row.relevant_chunk_ids)
    aliases = _aliases(row)
    parts = []
    for number, chunk in enumerate(row.pool, start=1):
        on = chunk.chunk_id in checked
        ranks = ", ".join(f"{name} {rank}" for name, rank in chunk.ranks.items() if rank is not None)
        where = f'<span class="found">{texts["by_search"]}</span>' if chunk.found_by == "search" else f'{texts["ranks"]}: {_e(ranks)}'
        title = f"<strong>{_marked(highlight(chunk.title, row.question, aliases))}</strong><br>" if chunk.title else ""
        parts.append(
            f'<label class="chunk{" checked" if on else ""}"><input type="checkbox" class="pick" value="{_e(chunk.chunk_id)}"'
            f'{" checked" if on else ""}><span class="n">{number}</span><span>{title}'
            f'{_marked(highlight(chunk.text, row.question, aliases))}'
            f'<br><span class="meta">{_e(chunk.doc_id)} · {where}</span></span></label>')
    return "".join(parts)


def keypoint_html(row: DraftCase, texts: dict[str, str]) -> str:
    """Per keypoint, the pool chunks (by number) whose text holds one of its aliases."""
    lines = []
    for keypoint in row.keypoints:
        found = [str(n) for n, chunk in enumerate(row.pool, start=1)
                 if any(flag for _, flag in highlight(f"{chunk.title}\n{chunk.text}", "", keypoint))]
        where = f"{texts['found']} {', '.join(found)}" if found else texts["none"]
        lines.append(f"<li>{_e(' | '.join(keypoint))}: {where}</li>")
    return f"<ul>{''.join(lines)}</ul>" if lines else ""


def _case_body(row: DraftCase, store: ReviewStore, texts: dict[str, str]) -> str:
    stratum = f"{texts['stratum']} {_label(row.stratum, texts)}"
    count = f" · {texts['count']} {_e(row.count)}" if row.count is not None else ""
    keypoints = "\n".join(" | ".join(k) for k in row.keypoints)
    return (
        f'<h2>{texts["question"]}</h2><div class="question" id="question">{_e(row.question)}</div>'
        f'<div class="meta">{_e(row.id)} · {stratum}{count} · {_label(row.category, texts)}</div>'
        f'<h2>{texts["pool"]}</h2><div id="pool">{pool_html(row, texts)}</div>'
        f'{search_html(store, texts)}'
        f'<h2>{texts["answer"]}</h2><textarea id="answer" rows="2">{_e(row.ground_truth)}</textarea>'
        f'<h2>{texts["keypoints"]}</h2><textarea id="keypoints" rows="4">{_e(keypoints)}</textarea>'
        f'<div id="kpfound" class="meta">{keypoint_html(row, texts)}</div>'
    )


def search_html(store: ReviewStore, texts: dict[str, str]) -> str:
    """The search box over the whole knowledge base (under the pool), with a line naming the retrievers it uses."""
    kb = store.knowledge_base()
    note = texts["search_both"] if "dense" in store.searcher().retrievers else texts["search_bm25"].format(
        model=embedding_model(kb), language=kb.language)
    return (f'<section id="search-box"><h2>{texts["search"]}</h2><div class="meta" id="search-note">{_e(note)}</div>'
            f'<form id="search-form"><input type="text" id="search" autocomplete="off">'
            f'<button id="search-go" type="submit">{texts["search_go"]}</button></form><div id="search-results"></div></section>')


def _conflict_body(row: DraftConflict, store: ReviewStore, texts: dict[str, str]) -> str:
    wrong = [str(w) for w in row.wrong_values]
    other = next((doc for doc in store.knowledge_base().corpus if doc.doc_id == row.conflicts_with), None)
    other_text = _marked(highlight(other.text, "", wrong), "w") if other else _e(texts["missing"])
    return (
        f'<div class="meta" id="question">{texts["kind"]}: {" · ".join(_label(v, texts) for v in (row.kind, row.severity) if v)}'
        f' · {texts["wrong"]}: {_e(", ".join(wrong))}</div>'
        f'<div class="side"><div><h2>{texts["candidate"]}: {_e(row.doc_id)}</h2>'
        f'<div class="doc">{_marked(highlight(row.text, "", wrong), "w")}</div></div>'
        f'<div><h2>{texts["original"]}: {_e(row.conflicts_with)}</h2><div class="doc">{other_text}</div></div></div>'
    )


def export_message(done: Export, language: str) -> str:
    """What the page says after an export, in the UI's language: how many cases went where, and where the labels came
    from (the provenance the export wrote, :class:`tuner.dataset.LabelProvenance`).

    >>> from pathlib import Path
    >>> print(export_message(Export(Path("kb/golden.jsonl"), 1, 0, ""), "zh"))
    已导出 1 条到 kb/golden.jsonl。
    """
    labels = done.provenance
    if language == "zh":
        head = f"已导出 {done.written} 条到 {done.path}" + (f"（保留其他草稿的 {done.kept} 条）" if done.kept else "") + "。"
        if labels is None:
            return head
        depth = "?" if labels.pool_depth is None else labels.pool_depth
        pools = (f"{len(labels.drafts)} 份草稿的审核" if len(labels.drafts) > 1
                 else f"对 {'+'.join(labels.pool_retrievers)} 候选池（深度 {depth}）的审核")
        unreviewed = f"，另有 {labels.unreviewed} 条无审核记录（来源未知）" if labels.unreviewed else ""
        return (f"{head}标注来自{pools}：{labels.cases} 条，其中 {labels.cases_found_by_search} 条有在候选池外搜索到的标注"
                f"（{labels.labels_found_by_search} 个片段），{labels.no_answer} 条标为知识库中无答案，{labels.rejected} 条被拒绝{unreviewed}。")
    head = (f"Exported {plural(done.written, 'case')} to {done.path}"
            + (f" ({plural(done.kept, 'case')} of other drafts kept)" if done.kept else "") + ".")
    return head if labels is None else f"{head} {labels.summary()[0].upper()}{labels.summary()[1:]}."


def _state_json(state: dict[str, Any]) -> str:
    """``state`` as the text of a ``<script type="application/json">``: every ``<`` escaped, so no value (a doc id
    holding ``</script>`` or ``<!--``) can end the element or start a comment in it.

    >>> print(_state_json({"id": "<!--<script>"}))
    {"id": "\\u003c!--\\u003cscript>"}
    """
    return json.dumps(state, ensure_ascii=False).replace("<", "\\u003c")


def _page(store: ReviewStore, row: DraftRow | None, language: str, status_filter: str, token: str) -> str:
    texts = TEXTS[language]
    progress = store.progress()
    groups = " · ".join(f"{_label(name, texts)} {c['reviewed']}/{c['total']}" for name, c in progress["by_group"].items())
    options = "".join(f'<option value="{f}"{" selected" if f == status_filter else ""}>{texts[f]}</option>' for f in FILTERS)
    header = (
        f'<header><strong>{texts["title"]}</strong><span id="progress">{texts["reviewed"]} {progress["reviewed"]}/{progress["total"]}'
        f' ({groups})</span><label>{texts["filter"]} <select id="filter">{options}</select></label>'
        f'<button id="lang" type="button">{texts["language"]}</button><button id="export" type="button">{texts["export"]}</button>'
        f'<span id="export-result" role="status"></span></header>'
    )
    if row is None:
        body, key, version, status = f'<p id="done">{texts["done"]}</p>', "", 0, "pending"
    else:
        key, version, status = row.key, row.review.version, row.review.status
        body = _case_body(row, store, texts) if isinstance(row, DraftCase) else _conflict_body(row, store, texts)
    actions = ("accept", "reject", "no_answer", "skip", "reopen") if store.kind == CASES else ("accept", "reject", "skip", "reopen")
    buttons = "".join(f'<button id="{name}" type="button">{texts[name]}</button>' for name in actions)
    state = {"id": key, "version": version, "filter": status_filter, "texts": texts, "search_k": 10,
             "token": token, "token_header": TOKEN_HEADER,
             "other_language": next(lang for lang in UI_LANGUAGES if lang != language)}
    payload = _state_json(state)
    return (
        f'<!doctype html><html lang="{"zh-CN" if language == "zh" else "en"}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>{texts["title"]}</title><style>{asset("review.css")}</style></head><body>'
        f'{header}<main><div>{texts["status"]}: <span class="status" id="status" data-status="{status}">{texts[status]}</span></div>'
        f'{body}<div class="actions">{buttons if row is not None else ""}<button id="back" type="button">{texts["back"]}</button>'
        f'<button id="next" type="button">{texts["next"]}</button></div><div id="message" role="alert"></div>'
        f'<p class="keys">{texts["keys"]}</p></main><script type="application/json" id="state">{payload}</script>'
        f'<script>{asset("review.js")}</script></body></html>'
    )


def build_review_app(store: ReviewStore, language: str | None = None, token: str | None = None) -> FastAPI:
    """The review app over ``store``; ``language`` (``en`` or ``zh``) is the UI's default, else the drafts' language.
    A ``lang`` cookie (the header's language button) overrides it. Writes need ``token`` (default: a new one), which
    the pages carry; it answers to loopback ``Host`` names only. When the app stops, the draft file is rewritten with
    the saves the review log holds beyond it (:meth:`ReviewStore.flush`)."""
    sample = [row.question if isinstance(row, DraftCase) else row.text for row in store.rows()[:50]]
    default = language or detect_language(sample)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        store.flush()

    app = FastAPI(title="tuner golden review", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    secret = token or new_token()
    app.add_middleware(BodyGuard)  # a body too large or nested too deep: 413, or 400 as any malformed body
    app.add_middleware(WriteGuard, token=secret, hosts=LOOPBACK_NAMES)

    @app.exception_handler(UserError)
    async def unusable_draft(request: Request, exc: UserError) -> Response:
        # the draft file, edited by hand while the app runs, no longer reads: say which line, not a bare 500
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=500)
        return HTMLResponse(f"<p>{_e(exc)}</p>", status_code=500)

    def ui_language(request: Request) -> str:
        chosen = request.cookies.get("lang")
        return chosen if chosen in UI_LANGUAGES else default

    def chosen_filter(value: str | None) -> str:
        return value if value in FILTERS else "all"

    def shown(request: Request, row: DraftRow | None, status_filter: str) -> HTMLResponse:
        return HTMLResponse(_page(store, row, ui_language(request), status_filter, secret), headers={"Cache-Control": "no-store"})

    @app.get("/", response_class=HTMLResponse)
    def first(request: Request) -> HTMLResponse:
        key = store.first_to_review()
        return shown(request, None if key is None else store.row(key), "all")

    @app.get("/case/{case_id:path}", response_class=HTMLResponse)
    def case(case_id: str, request: Request, filter: str | None = None) -> Response:
        row = store.row(case_id)
        if row is None:
            return HTMLResponse(f"<p>unknown case {_e(case_id)}</p>", status_code=404)
        return shown(request, row, chosen_filter(filter))

    @app.get("/step/{case_id:path}")
    def step(case_id: str, request: Request, dir: str = "next", filter: str | None = None) -> Response:
        status_filter = chosen_filter(filter)
        rows = store.rows()
        keys = [row.key for row in rows]
        start = keys.index(case_id) if case_id in keys else -1
        order = range(start + 1, len(rows)) if dir == "next" else range(start - 1, -1, -1)
        for index in order:
            if status_filter == "all" or rows[index].review.status == status_filter:
                return RedirectResponse(f"/case/{quote(keys[index], safe='')}?filter={status_filter}", status_code=303)
        if dir != "next" and case_id in keys:  # back from the first case of the view: stay on it
            return RedirectResponse(f"/case/{quote(case_id, safe='')}?filter={status_filter}", status_code=303)
        return shown(request, None, status_filter)

    @app.post("/api/cases/{case_id:path}")
    async def update(case_id: str, request: Request) -> JSONResponse:
        try:
            edit = Edit.model_validate_json(await request.body())
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                return JSONResponse({"error": "the request body must be a JSON object"}, status_code=400)
            return JSONResponse({"error": validation_problem(exc)}, status_code=422)
        try:
            row = store.save(case_id, edit)
        except StaleVersion as exc:
            return JSONResponse({"error": str(exc), "current_version": exc.current}, status_code=409)
        except KeyError:
            return JSONResponse({"error": f"unknown case {case_id}"}, status_code=404)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        reply: dict[str, Any] = {"row": row.record()}
        if isinstance(row, DraftCase) and {"keypoints", "found_chunk_ids"} & edit.fields():
            texts = TEXTS[ui_language(request)]
            reply.update(pool_html=pool_html(row, texts), keypoint_html=keypoint_html(row, texts))
        return JSONResponse(reply)

    @app.get("/api/search")
    def search(q: str | None = None, k: str | None = None) -> JSONResponse:
        return search_reply(store, q, k)

    @app.get("/api/progress")
    def progress() -> dict[str, Any]:
        return store.progress()

    @app.post("/api/export")
    def export(request: Request) -> JSONResponse:
        try:
            done = store.export()
        except DatasetError as exc:
            return JSONResponse({"error": f"validation failed, nothing written: {exc.problems[0]}", "problems": exc.problems},
                                status_code=400)
        except UserError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"path": str(done.path), "written": done.written, "kept": done.kept, "summary": done.summary,
                             "labels": done.labels, "message": export_message(done, ui_language(request))})

    return app


def search_reply(store: ReviewStore, q: str | None, k: str | None) -> JSONResponse:
    """``GET /api/search``: the top ``k`` (default 10, at most :data:`SEARCH_DEPTH`) chunks of the whole knowledge base
    for ``q``, as ``[{rank, chunk_id, doc_id, title, text}]`` (rank 1 = best); a missing ``q``, one with nothing to read
    (:func:`tuner.text.is_blank`: spaces of any script, control and zero-width characters only) or a bad ``k`` is a 400
    saying which."""
    if q is None or is_blank(q):
        return JSONResponse({"error": "q: give the text to search for (q=...)"}, status_code=400)
    if len(q) > 1000:
        return JSONResponse({"error": f"q: at most 1000 characters, got {len(q)}"}, status_code=400)
    depth = 10 if k is None else int(k) if k.isascii() and k.isdecimal() and len(k) <= 3 else 0
    if not 1 <= depth <= SEARCH_DEPTH:
        return JSONResponse({"error": f"k: an integer from 1 to {SEARCH_DEPTH}, got {k!r}"}, status_code=400)
    hits = store.searcher().search(q, depth)
    return JSONResponse([{"rank": rank, **{name: hit[name] for name in ("chunk_id", "doc_id", "title", "text")}}
                         for rank, hit in enumerate(hits, start=1)])
