//! The report as one document — headings, paragraphs, lists, tables, figures — and its
//! two renderings: Markdown (`report.md`) and a self-contained HTML page (`index.html`:
//! inline CSS, figures as inline SVG, no script, no network). The report is built once
//! as a [`Doc`]; the two files can only differ in form, never in content.
//!
//! Text is plain with three inline marks, written the Markdown way: `**bold**`,
//! `` `code` `` and `[text](href)`.

use std::fmt::Write;

/// How a table cell reads against the source (HTML colours it; Markdown has the words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Agrees,
    Differs,
}

#[derive(Clone, Debug)]
pub struct TCell {
    pub text: String,
    pub tone: Tone,
}

impl From<String> for TCell {
    fn from(text: String) -> TCell {
        TCell { text, tone: Tone::Plain }
    }
}

#[derive(Clone, Debug)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<TCell>>,
}

#[derive(Clone, Debug)]
pub enum Block {
    Heading {
        level: u8,
        text: String,
        id: Option<String>,
    },
    Para(String),
    List(Vec<String>),
    /// `name: value` lines (a section's source, form, command...).
    Fields(Vec<(String, String)>),
    Table(Table),
    /// A plot: inlined in HTML, linked from Markdown.
    Figure {
        svg: String,
        path: String,
        alt: String,
        caption: String,
    },
    /// Folded in HTML; a list item in Markdown.
    Details {
        summary: String,
        body: String,
    },
    /// A titled part with an anchor (`<section id>` in HTML).
    Section {
        id: String,
        blocks: Vec<Block>,
    },
    /// Blocks side by side where the page is wide enough (a table and its plot).
    Row(Vec<Block>),
    /// Blocks one under the other (one side of a [`Block::Row`]).
    Group(Vec<Block>),
}

#[derive(Clone, Debug, Default)]
pub struct Doc {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Table {
    pub fn plain(head: Vec<String>, rows: Vec<Vec<String>>) -> Table {
        Table { head, rows: rows.into_iter().map(|r| r.into_iter().map(TCell::from).collect()).collect() }
    }
}

// ---------------------------------------------------------------- Markdown

/// `report.md`.
pub fn markdown(doc: &Doc) -> String {
    let mut s = format!("# {}\n\n", doc.title);
    for b in &doc.blocks {
        md_block(b, &mut s);
    }
    while s.ends_with("\n\n") {
        s.pop();
    }
    s
}

fn md_cell(c: &TCell) -> String {
    c.text.replace('|', "\\|")
}

fn md_block(b: &Block, s: &mut String) {
    match b {
        Block::Heading { level, text, id } => {
            if let Some(id) = id {
                let _ = writeln!(s, "<a id=\"{id}\"></a>\n");
            }
            let _ = writeln!(s, "{} {text}\n", "#".repeat(usize::from(*level)));
        }
        Block::Para(t) => {
            let _ = writeln!(s, "{t}\n");
        }
        Block::List(items) => {
            for i in items {
                let _ = writeln!(s, "- {i}");
            }
            s.push('\n');
        }
        Block::Fields(fs) => {
            for (k, v) in fs {
                let _ = writeln!(s, "- **{k}:** {v}");
            }
            s.push('\n');
        }
        Block::Table(t) => {
            let rows: Vec<Vec<String>> = t.rows.iter().map(|r| r.iter().map(md_cell).collect()).collect();
            let head: Vec<String> = t.head.iter().map(|h| h.replace('|', "\\|")).collect();
            s.push_str(&crate::table::md_table(&head, &rows));
            s.push('\n');
        }
        Block::Figure { path, alt, caption, .. } => {
            let _ = writeln!(s, "![{alt}]({path})\n\n*{caption}*\n");
        }
        Block::Details { summary, body } => {
            let _ = writeln!(s, "- {summary}: {body}\n");
        }
        Block::Section { id, blocks } => {
            let _ = writeln!(s, "<a id=\"{id}\"></a>\n");
            for b in blocks {
                md_block(b, s);
            }
        }
        Block::Row(blocks) | Block::Group(blocks) => {
            for b in blocks {
                md_block(b, s);
            }
        }
    }
}

// ---------------------------------------------------------------- HTML

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The three inline marks as HTML; everything else escaped. A link to a `.md` file of
/// the repository stays a plain relative link.
pub fn inline(s: &str) -> String {
    let mut out = String::new();
    let (mut code, mut bold) = (false, false);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if !code && rest.starts_with("**") {
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
            rest = &rest[2..];
        } else if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = &rest[1..];
        } else if !code && c == '[' {
            if let Some((text, href, after)) = link(rest) {
                let _ = write!(out, "<a href=\"{}\">{}</a>", esc(href), inline(text));
                rest = after;
            } else {
                out.push('[');
                rest = &rest[1..];
            }
        } else {
            out.push_str(&esc(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `[text](href)rest` → (text, href, rest).
fn link(s: &str) -> Option<(&str, &str, &str)> {
    let close = s.find("](")?;
    let end = s[close..].find(')')? + close;
    let text = &s[1..close];
    if text.contains('[') {
        return None;
    }
    Some((text, &s[close + 2..end], &s[end + 1..]))
}

fn svg_inline(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

fn html_block(b: &Block, s: &mut String) {
    match b {
        Block::Heading { level, text, id } => {
            let id = id.as_ref().map(|i| format!(" id=\"{i}\"")).unwrap_or_default();
            let _ = writeln!(s, "<h{level}{id}>{}</h{level}>", inline(text));
        }
        Block::Para(t) => {
            let _ = writeln!(s, "<p>{}</p>", inline(t));
        }
        Block::List(items) => {
            s.push_str("<ul>\n");
            for i in items {
                let _ = writeln!(s, "<li>{}</li>", inline(i));
            }
            s.push_str("</ul>\n");
        }
        Block::Fields(fs) => {
            s.push_str("<dl>\n");
            for (k, v) in fs {
                let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", inline(k), inline(v));
            }
            s.push_str("</dl>\n");
        }
        Block::Table(t) => {
            s.push_str("<table>\n<thead><tr>");
            for h in &t.head {
                let _ = write!(s, "<th>{}</th>", inline(h));
            }
            s.push_str("</tr></thead>\n<tbody>\n");
            for r in &t.rows {
                s.push_str("<tr>");
                for (i, c) in r.iter().enumerate() {
                    let tag = if i == 0 { "th" } else { "td" };
                    let class = match c.tone {
                        Tone::Plain => "",
                        Tone::Agrees => " class=\"agrees\"",
                        Tone::Differs => " class=\"differs\"",
                    };
                    let _ = write!(s, "<{tag}{class}>{}</{tag}>", inline(&c.text));
                }
                s.push_str("</tr>\n");
            }
            s.push_str("</tbody>\n</table>\n");
        }
        Block::Figure { svg, caption, .. } => {
            let _ = writeln!(s, "<figure>{}<figcaption>{}</figcaption></figure>", svg_inline(svg), inline(caption));
        }
        Block::Details { summary, body } => {
            let _ = writeln!(
                s,
                "<details><summary>{}</summary><p class=\"costs\">{}</p></details>",
                inline(summary),
                esc(body)
            );
        }
        Block::Section { id, blocks } => {
            // Styled by id only (`#wall-clock`): `<section id="wall-clock">` is where the
            // deterministic part of the page ends.
            let _ = writeln!(s, "<section id=\"{id}\">");
            for b in blocks {
                html_block(b, s);
            }
            s.push_str("</section>\n");
        }
        Block::Row(blocks) => {
            s.push_str("<div class=\"row\">\n");
            for b in blocks {
                s.push_str("<div>\n");
                html_block(b, s);
                s.push_str("</div>\n");
            }
            s.push_str("</div>\n");
        }
        Block::Group(blocks) => {
            for b in blocks {
                html_block(b, s);
            }
        }
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1400px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.2em .6em}td{text-align:right}thead th{background:#f0f0f0}tbody th{text-align:left;font-weight:normal}
td.agrees{background:#eaf6ea}td.differs{background:#fbeaea}
section{border-top:2px solid #888;margin-top:2em}dt{font-weight:bold;float:left;clear:left;width:7em}dd{margin-left:8em}
.row{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}figure{margin:0}figcaption{font-size:85%;color:#444;max-width:860px}
.costs{font-size:80%;color:#555}#wall-clock{border-top:4px double #b00;background:#fff8f0}code{background:#f4f4f4}";

/// `index.html`.
pub fn html(doc: &Doc) -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(s, "<title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>", esc(&doc.title));
    let _ = writeln!(s, "<h1>{}</h1>", inline(&doc.title));
    for b in &doc.blocks {
        html_block(b, &mut s);
    }
    s.push_str("</body>\n</html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_marks() {
        assert_eq!(
            inline("a **b** `c<d>` [e](f.md#g) [x"),
            "a <strong>b</strong> <code>c&lt;d&gt;</code> <a href=\"f.md#g\">e</a> [x"
        );
    }

    #[test]
    fn one_doc_two_forms() {
        let doc = Doc {
            title: "T".into(),
            blocks: vec![Block::Section {
                id: "s".into(),
                blocks: vec![
                    Block::Heading { level: 2, text: "H".into(), id: None },
                    Block::Table(Table::plain(vec!["a".into(), "b".into()], vec![vec!["x".into(), "1|2".into()]])),
                ],
            }],
        };
        let md = markdown(&doc);
        assert!(md.starts_with("# T\n\n<a id=\"s\"></a>\n\n## H\n"), "{md}");
        assert!(md.contains("1\\|2"), "{md}");
        let h = html(&doc);
        assert!(h.contains("<section id=\"s\">\n<h2>H</h2>") && h.contains("<td>1|2</td>"), "{h}");
    }
}
