"""First mile figures: tuner import files on a generated mixed folder (titles/texts, incremental re-import, 1,000
files), keypoint rules on ConflictNQ val and CMRC 2018 trial, conflict finder precision/recall on the demo (en, zh)
and on ConflictNQ val. Run: PYTHONPATH=. HF_HUB_OFFLINE=1 python bench/firstmile_files.py [imports] [keypoints] [conflicts | conflicts-nq]
[--dense=0.8,0.9] (all three parts by default; conflicts-nq: ConflictNQ only; --dense adds conflict runs with dense pairing at these cosines)."""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tuner.dataset import Dataset, Document, generate_demo, load_knowledge_base
from tuner.dataset.importers import import_files, infer_version
from tuner.generation import answer_type
from tuner.golden import find_conflicts, question_conflicts, rule_keypoints
from tuner.text import normalize_text

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def _mixed(folder: Path, n: int) -> dict[str, str]:
    """``n`` files over md, html, GBK txt, docx and (English, no CJK font here) pdf; doc id → expected title."""
    import docx
    from fpdf import FPDF

    titles: dict[str, str] = {}
    for i in range(n):
        kind = ("md", "html", "txt", "docx", "pdf")[i % 5]
        path = folder / f"d{i // 100}" / f"doc{i}.{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "md":
            path.write_text(f"# Policy {i}\n\nStaff get {i} days of leave.\n", encoding="utf-8")
            titles[path.relative_to(folder).as_posix()] = f"Policy {i}"
        elif kind == "html":
            path.write_text(f"<html><head><title>News {i}</title></head><body><nav><a href='/'>Home</a> <a href='/a'>About us"
                            f"</a></nav><article><p>Office {i} opened with {i} staff in the city centre this spring. It will host the"
                            f" research team and a new lab for product work.</p></article><footer>All rights reserved</footer>"
                            f"</body></html>", encoding="utf-8")
            titles[path.relative_to(folder).as_posix()] = f"News {i}"
        elif kind == "txt":
            path.write_bytes(f"员工每年享有带薪年假{i}天，病假另计，详见人力资源部通知。".encode("gbk"))
            titles[path.relative_to(folder).as_posix()] = f"doc{i}"
        elif kind == "docx":
            document = docx.Document()
            document.add_paragraph(f"员工手册 {i}", style="Title")
            document.add_paragraph(f"试用期为{i}个月。")
            document.save(str(path))
            titles[path.relative_to(folder).as_posix()] = f"员工手册 {i}"
        else:
            pdf = FPDF()
            pdf.set_title(f"Report {i}")
            pdf.add_page()
            pdf.set_font("helvetica", size=12)
            pdf.multi_cell(0, 8, f"Revenue grew {i} percent.")
            pdf.output(str(path))
            titles[path.relative_to(folder).as_posix()] = f"Report {i}"
    return titles


def imports(tmp: Path) -> None:
    src, kb = tmp / "src", tmp / "kb"
    titles = _mixed(src, 1000)
    start = time.perf_counter()
    first = import_files(src, kb)
    cold = time.perf_counter() - start
    corpus = {d.doc_id: d for d in load_knowledge_base(kb).corpus}
    right = sum(corpus[d].title == t for d, t in titles.items())
    gbk = [d for d in corpus if d.endswith(".txt")]
    gbk_ok = sum(corpus[d].text.startswith("员工每年享有带薪年假") for d in gbk)
    nav = sum("About us" in corpus[d].text or "rights reserved" in corpus[d].text for d in corpus if d.endswith(".html"))
    (src / "d0" / "doc0.md").write_text("# Policy 0\n\nStaff get 99 days.\n", encoding="utf-8")
    (src / "d0" / "doc1.html").unlink()
    start = time.perf_counter()
    again = import_files(src, kb)
    warm = time.perf_counter() - start
    print(f"import: {len(first.added)} files in {cold:.1f} s ({1000 / cold:.0f} files/s), failed {len(first.failed)}; "
          f"titles right {right}/{len(titles)}; GBK texts right {gbk_ok}/{len(gbk)}; html with nav/footer text {nav}")
    print(f"re-import after 1 change + 1 removal: {warm:.1f} s ({warm / cold:.2f}x the first import); "
          f"added {len(again.added)} changed {len(again.changed)} removed {len(again.removed)} unchanged {len(again.unchanged)}")


def _squash(text: str) -> str:
    return re.sub(r"[\s,，.。]+", "", normalize_text(text))


def _hit(keypoints: list[tuple[str, ...]], short: str) -> bool:
    target = _squash(short)
    return any(_squash(a) == target or (target and target in _squash(a)) for k in keypoints for a in k)


def _keypoint_figures(name: str, cases: list[tuple[str, list[str], str]]) -> None:
    """Per case (reference answer, relevant documents, labeled short answer): the hit share, the share of cases with at
    least one keypoint, and keypoints per case."""
    extracted = [rule_keypoints(answer, documents) for answer, documents, _ in cases]
    hits = sum(_hit(k, short) for k, (_, _, short) in zip(extracted, cases))
    some = sum(bool(k) for k in extracted)
    print(f"keypoints {name}: hit {hits}/{len(cases)} = {hits / max(1, len(cases)):.3f}; "
          f"cases with a keypoint {some}/{len(cases)} = {some / max(1, len(cases)):.3f}; "
          f"{sum(map(len, extracted)) / max(1, len(cases)):.2f} keypoints per case")


def keypoints() -> None:
    rows = [json.loads(x) for x in (SHARED / "conflictnq" / "conflict_nq_val.jsonl").read_text().splitlines() if x.strip()]
    cases = [(r["real_answer"], [p["passage"] for p in r["real_passages"]], r["real_short_answer"]) for r in rows]
    _keypoint_figures("ConflictNQ val (long real_answer → contains real_short_answer)", cases)
    _keypoint_figures("  of which short answers of at most 6 words", [c for c in cases if len(c[2].split()) <= 6])
    squad = json.loads((SHARED / "cmrc2018" / "cmrc2018_trial.json").read_text())
    cmrc = [(qa["answers"][0]["text"], [paragraph["context"]], qa["answers"][0]["text"])
            for article in squad["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
    _keypoint_figures("CMRC 2018 trial (reference answer = first answer text)", cmrc)


def _score(name: str, kb: Dataset, truth: set[frozenset[str]], near_duplicates: bool = True,
           dense: float | None = None, questions: Sequence[str] = ()) -> set[frozenset[str]]:
    start = time.perf_counter()
    if questions:
        candidates = question_conflicts(kb, questions)
    else:
        candidates = find_conflicts(kb, near_duplicates=near_duplicates, dense=dense)
    found = {frozenset((c.doc_id, c.conflicts_with)) for c in candidates}
    took = time.perf_counter() - start
    tp = len(found & truth)
    print(f"conflicts {name}: {len(kb.corpus)} docs, truth {len(truth)} pairs, found {len(found)}, "
          f"precision {tp / max(1, len(found)):.3f}, recall {tp / max(1, len(truth)):.3f} ({took:.1f} s)")
    return found


def _false_positives(found: set[frozenset[str]], truth: set[frozenset[str]], stale_of: dict[str, str], family: dict[str, str]) -> None:
    """Why each found pair the demo does not list was flagged, by what its two documents are."""
    kinds: dict[str, int] = {}
    for pair in found - truth:
        a, b = sorted(pair)
        if a in stale_of and b in stale_of:
            kind = "two stale versions of one page" if stale_of[a] == stale_of[b] else "stale versions of two different pages"
        elif a in stale_of or b in stale_of:
            stale, other = (a, b) if a in stale_of else (b, a)
            kind = "a stale version and another page of its family" if family[stale] == family[other] else \
                "a stale version and a page of another family"
        else:
            kind = "two current pages" + (" of one family" if family[a] == family[b] else "")
        kinds[kind] = kinds.get(kind, 0) + 1
    for kind, count in sorted(kinds.items(), key=lambda item: -item[1]):
        print(f"    false positive: {kind}: {count}")


def conflicts(tmp: Path, dense: tuple[float, ...], demo_too: bool = True) -> None:
    for lang in ("en", "zh") if demo_too else ():
        folder = tmp / f"demo-{lang}"
        demo = generate_demo(folder, language=lang)
        # the demo's conflicting documents join the corpus as files named by their doc id would be imported: the
        # family is what tuner import files infers from the name (prod-aurora-a48-2024-03-04 → prod-aurora-a48)
        docs = [Document(d.doc_id, d.text, d.title, {"family": infer_version(f"{d.doc_id}.md", d.title).family})
                for d in [*demo.corpus, *(Document(c.doc_id, c.text, c.title) for c in demo.conflicts)]]
        truth = {frozenset((c.doc_id, c.conflicts_with)) for c in demo.conflicts}
        stale_of = {c.doc_id: c.conflicts_with for c in demo.conflicts}
        family = {d.doc_id: str(d.metadata["family"]) for d in docs}
        found = _score(f"demo {lang}, families from names", Dataset(folder, tuple(docs), ()), truth, near_duplicates=False)
        _false_positives(found, truth, stale_of, family)
        bare = Dataset(folder, tuple(Document(d.doc_id, d.text, d.title) for d in docs), (), language=demo.language)
        # as on a knowledge base without versions: only near duplicates pair documents
        found = _score(f"demo {lang}, no families, MinHash", bare, truth)
        _false_positives(found, truth, stale_of, family)
        for cosine in dense:
            found = _score(f"demo {lang}, no families, MinHash + dense >= {cosine}", bare, truth, dense=cosine)
            _false_positives(found, truth, stale_of, family)
        found = _score(f"demo {lang}, no families, golden questions (--questions alone)", bare, truth,
                       questions=[case.question for case in demo.golden])
        _false_positives(found, truth, stale_of, family)
    if not (SHARED / "conflictnq").is_dir():
        return
    rows = [json.loads(x) for x in (SHARED / "conflictnq" / "conflict_nq_val.jsonl").read_text().splitlines() if x.strip()]
    docs = []
    truth = set()
    for i, row in enumerate(rows):
        reals = [f"real-{i}-{j}" for j in range(len(row["real_passages"]))]
        docs.extend(Document(d, p["passage"], p.get("summary", "")) for d, p in zip(reals, row["real_passages"]))
        for j, p in enumerate(row["fake_passages"]):
            docs.append(Document(f"fake-{i}-{j}", p["passage"], p.get("summary", "")))
            truth.update(frozenset((f"fake-{i}-{j}", r)) for r in reals)
    kb = Dataset(tmp, tuple(docs), ())
    _score("ConflictNQ val (real + fabricated passages), MinHash", kb, truth)
    found = _score("ConflictNQ val (real + fabricated passages), its questions (--questions alone)", kb, truth,
                   questions=[row["question"] for row in rows])
    same = sum(1 for pair in found - truth if len({d.split("-")[1] for d in pair}) == 1)
    typed = {i for i, row in enumerate(rows) if answer_type(row["question"]) != "sentence"}
    typed_truth = {pair for pair in truth if int(next(iter(pair)).split("-")[1]) in typed}
    print(f"    false positives within one question (two fabrications that disagree): {same}, across questions: "
          f"{len(found - truth) - same}; questions asking a date, number or name: {len(typed)} of {len(rows)}, "
          f"recall on their pairs {len(found & typed_truth) / max(1, len(typed_truth)):.3f} ({len(typed_truth)} pairs)")
    for cosine in dense:
        found = _score(f"ConflictNQ val (real + fabricated passages), MinHash + dense >= {cosine}", kb, truth, dense=cosine)
        same = sum(1 for pair in found - truth if len({d.split("-")[1] for d in pair}) == 1)
        print(f"    false positives within one question: {same}, across questions: {len(found - truth) - same}")


def main() -> int:
    parts = [a for a in sys.argv[1:] if not a.startswith("--dense=")] or ["imports", "keypoints", "conflicts"]
    dense = tuple(float(v) for a in sys.argv[1:] if a.startswith("--dense=") for v in a.split("=", 1)[1].split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if "imports" in parts:
            imports(Path(tmp))
        if "keypoints" in parts and (SHARED / "conflictnq").is_dir() and (SHARED / "cmrc2018").is_dir():
            keypoints()
        if "conflicts" in parts or "conflicts-nq" in parts:
            conflicts(Path(tmp), dense, demo_too="conflicts" in parts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
