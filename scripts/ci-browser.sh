#!/usr/bin/env bash
# Open a `schedlab reproduce` report in a real browser (headless Chromium) and check
# what a reader would see: every section heading of report.md and every plot is in
# the rendered DOM, no plot is empty, and a screenshot of the page is saved.
#
#   scripts/ci-browser.sh DIR        (DIR holds report.md and index.html)
#
# Exit 0: all there; 1: something is missing (each missing item is named on stderr);
# 2: bad usage or no browser. Each Chromium run is bounded by `timeout 120`.
set -euo pipefail

die() { echo "ci-browser: $1" >&2; exit "${2:-2}"; }

[ $# -eq 1 ] || die "usage: scripts/ci-browser.sh DIR (a schedlab reproduce output directory)"
dir=$1
[ -f "$dir/index.html" ] || die "$dir/index.html: no such file (run schedlab reproduce --out $dir first)"
[ -f "$dir/report.md" ] || die "$dir/report.md: no such file (run schedlab reproduce --out $dir first)"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[ -n "$browser" ] || die "no Chromium found (Debian: apt-get install chromium)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the DOM"

root=$(cd "$(dirname "$0")/.." && pwd)
page="file://$(cd "$dir" && pwd)/index.html"
shot="$root/target/reproduce-screenshot.png"
mkdir -p "$root/target"
# A profile of our own: other Chromium processes on this machine keep theirs.
profile=$(mktemp -d)
dom=$(mktemp)
trap 'rm -rf "$profile" "$dom"' EXIT
flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$profile" --no-first-run
       --disable-extensions --allow-file-access-from-files)

if ! timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" >"$dom" 2>"$profile/dump.err"; then
  tail -5 "$profile/dump.err" >&2
  die "$browser --dump-dom $page failed or timed out (120 s)" 1
fi
rm -f "$shot"
if ! timeout 120 "$browser" "${flags[@]}" --screenshot="$shot" --window-size=1280,3000 --hide-scrollbars \
    "$page" >/dev/null 2>"$profile/shot.err" || [ ! -s "$shot" ]; then
  tail -5 "$profile/shot.err" >&2
  die "$browser --screenshot: no screenshot written to $shot" 1
fi

python3 - "$dir" "$dom" <<'EOF'
import html.parser, re, sys, xml.etree.ElementTree as ET

out_dir, dom_path = sys.argv[1], sys.argv[2]
md = open(f"{out_dir}/report.md", encoding="utf-8").read()
src = open(f"{out_dir}/index.html", encoding="utf-8").read()
dom = open(dom_path, encoding="utf-8").read()
problems = []

def norm(s):
    return " ".join(s.split())

# Section headings of report.md (## and ###), as plain text.
want = [norm(re.sub(r"\*\*|`", "", l.lstrip("#"))) for l in md.splitlines() if re.match(r"#{2,3} ", l)]

class Dom(html.parser.HTMLParser):
    """Heading texts, and per <svg>: its marks and whether it has text."""
    def __init__(self):
        super().__init__()
        self.headings, self.cur, self.svgs, self.in_svg = [], None, [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("h1", "h2", "h3"):
            self.cur = []
        if tag == "svg":
            self.in_svg += 1
            if self.in_svg == 1:
                self.svgs.append({"marks": 0, "texts": 0, "w": a.get("width", "0")})
        elif self.in_svg:
            s = self.svgs[-1]
            fill, stroke = (a.get("fill") or "").upper(), (a.get("stroke") or "").upper()
            if tag == "circle":
                s["marks"] += 1
            elif tag == "polyline" and stroke not in ("#000000", "#FFFFFF", "", "NONE"):
                s["marks"] += 1
            elif tag == "rect" and fill not in ("#FFFFFF", "", "NONE"):
                # The legend's swatches are 14 x 12; anything else coloured is data.
                if (a.get("width"), a.get("height")) != ("14", "12") and float(a.get("width") or 0) > 0:
                    s["marks"] += 1
            elif tag == "text":
                s["texts"] += 1
    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3") and self.cur is not None:
            self.headings.append(norm("".join(self.cur)))
            self.cur = None
        if tag == "svg":
            self.in_svg -= 1
    def handle_data(self, d):
        if self.cur is not None:
            self.cur.append(d)

p = Dom()
p.feed(dom)
have = set(p.headings)
for h in want:
    if h not in have:
        problems.append(f"heading not rendered: {h!r}")

# Every plot report.md shows is an inline <svg> of index.html, well-formed, and rendered.
plots_md = [l for l in md.splitlines() if l.startswith("![")]
svgs_src = re.findall(r"<svg\b.*?</svg>", src, flags=re.S)
for i, s in enumerate(svgs_src):
    try:
        ET.fromstring(s)
    except ET.ParseError as e:
        problems.append(f"inline <svg> #{i + 1} of index.html is not well-formed: {e}")
if len(svgs_src) < len(plots_md):
    problems.append(f"index.html inlines {len(svgs_src)} <svg>, report.md shows {len(plots_md)} plots")
if len(p.svgs) != len(svgs_src):
    problems.append(f"the rendered DOM has {len(p.svgs)} <svg>, index.html has {len(svgs_src)}")
for i, s in enumerate(p.svgs):
    what = plots_md[i][2:plots_md[i].index("](")] if i < len(plots_md) else f"<svg> #{i + 1}"
    if s["marks"] == 0:
        problems.append(f"empty plot (no bar, line or point): {what}")
    if s["texts"] == 0:
        problems.append(f"plot without any label: {what}")

# The reproduction study: the claims summary is rendered, and where a reproduced cell
# has a published value beside it, the plots draw the source's markers.
if "Summary: the sources' claims, judged" not in dom:
    problems.append("the claims summary is not in the rendered page")
if " · paper " in md and "the source's published value" not in dom:
    problems.append("published values beside the tables, but no plot draws the source's markers")
for m in problems:
    print(f"ci-browser: {m}", file=sys.stderr)
print(f"ci-browser: {len(want)} headings, {len(p.svgs)} plots checked in the rendered DOM; "
      f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
EOF
echo "ci-browser: screenshot $shot"
