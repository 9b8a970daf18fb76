#!/usr/bin/env python
"""Open a Snakemake report in headless Chromium and show every item as a reader would.

    python scripts/check_report.py results/report.html /tmp/report-shots [--chromium chromium]

For the landing page and for each result of each category, a copy of the report with a few lines
of JavaScript that click the category and the item's "eye" button is rendered by headless
Chromium; the script saves a screenshot per item (look at them) and checks in the rendered DOM
that the item is displayed (an image with data, an embedded page, or a table with rows). It exits
non-zero naming every item that does not show, and prints one line per item.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

CLICK = """<script>
function nbClickText(t) {
  const el = [...document.querySelectorAll('a,li,button,span,td')].reverse()
    .find(e => e.textContent.trim() === t);
  if (el) { el.click(); } return !!el;
}
function nbShow(category, label) {
  setTimeout(() => nbClickText(category), 300);
  setTimeout(() => {
    const td = [...document.querySelectorAll('td')].find(e => e.textContent.trim() === label);
    const eye = td && td.parentElement.querySelector('a[iconname=eye]');
    if (eye) { eye.click(); }
  }, 900);
}
function nbList() {
  const out = [];
  for (const [cat, subs] of Object.entries(categories)) {
    for (const paths of Object.values(subs)) {
      for (const p of paths) {
        const labels = results[p].labels;
        out.push([cat, labels ? Object.values(labels)[0] : results[p].name, results[p].mime_type]);
      }
    }
  }
  const pre = document.createElement('pre'); pre.id = 'nb-items'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
%s
</script></body>"""


def _inject(report: str, code: str, path: Path) -> Path:
    i = report.rfind("</body>")
    path.write_text(report[:i] + CLICK % code + report[i + len("</body>") :])
    return path


def _chromium(exe: str, page: Path, *args: str) -> str:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=8000", *args]
    proc = subprocess.run([*cmd, page.as_uri()], capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        raise RuntimeError(f"{exe} failed on {page}: {proc.stderr[-2000:]}")
    return proc.stdout


def items(exe: str, report: str, work: Path) -> list[tuple[str, str, str]]:
    """(category, label, mime type) of every result, as the report's own data lists them."""
    dom = _chromium(exe, _inject(report, "nbList();", work / "list.html"), "--dump-dom")
    m = re.search(r'<pre id="nb-items">(.*?)</pre>', dom, re.S)
    if not m:
        raise RuntimeError("report: could not list its results (is it a Snakemake report?)")
    import html

    return [tuple(x) for x in json.loads(html.unescape(m.group(1)))]


def shown(dom: str, mime: str) -> bool:
    """Whether the item replaced the landing page in the main panel and its content is displayed."""
    rendered = re.sub(r"<script.*?</script>", "", dom, flags=re.S)  # the report's data is in scripts
    if "What was run" in rendered:  # still the landing page (its description)
        return False
    if mime.startswith("image/"):
        return re.search(rf'<img[^>]+src="data:{re.escape(mime)}', rendered) is not None
    if mime == "text/html":
        return re.search(r"<iframe[^>]+src=", rendered) is not None
    if mime == "text/csv":
        return rendered.count("<table") >= 2  # the menu's table and the item's
    return re.search(r"<(pre|iframe|object|embed)", rendered) is not None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--only", help="check only items whose label contains this text")
    ap.add_argument("--no-screenshots", action="store_true", help="check the DOM only (faster)")
    args = ap.parse_args(argv)
    report = args.report.read_text(errors="replace")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if not args.no_screenshots:
        shot = f"--screenshot={args.out_dir / 'landing.png'}"
        _chromium(args.chromium, args.report.resolve(), shot, "--window-size=1400,1000")
    failures = []
    listed = items(args.chromium, report, args.out_dir)
    if args.only:
        listed = [x for x in listed if args.only in x[1]]
    for k, (category, label, mime) in enumerate(listed):
        page = _inject(
            report, f"nbShow({json.dumps(category)}, {json.dumps(label)});", args.out_dir / f"item{k}.html"
        )
        shot = args.out_dir / f"item{k:02d}.png"
        if not args.no_screenshots:
            _chromium(args.chromium, page, f"--screenshot={shot}", "--window-size=1400,1000")
        ok = shown(_chromium(args.chromium, page, "--dump-dom"), mime)
        page.unlink()
        print(f"{'ok  ' if ok else 'FAIL'} {category} / {label} ({mime}) -> {shot}")
        if not ok:
            failures.append(f"{category} / {label}")
    (args.out_dir / "list.html").unlink(missing_ok=True)
    if not listed:
        failures.append("the report lists no results")
    if failures:
        print("not shown: " + "; ".join(failures), file=sys.stderr)
        return 1
    print(f"{len(listed)} items shown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
