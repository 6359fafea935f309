// SiddhiQL for the editor: highlighting, diagnostics from the server, completion of names.
import { StreamLanguage, linter, lintGutter, autocompletion } from "./vendor/codemirror.js";

const KEYWORDS = new Set(`define stream table window trigger function aggregation partition with begin end
from select insert into delete update set or on as group by having order asc desc limit offset
output every events all first last expired current raw return join inner outer left right full
unidirectional within per aggregate at not and is null in of snapshot for sec second seconds min minute
minutes hour hours day days week weeks month months year years millisec millisecond milliseconds
true false string int long float double bool object`.split(/\s+/));

/** A tokenizer in CodeMirror's stream-parser form: comments, strings, numbers, annotations, keywords. */
export const siddhiLanguage = StreamLanguage.define({
  name: "siddhiql",
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo("*/")) { stream.match("*/"); state.inComment = false; } else stream.skipToEnd();
      return "comment";
    }
    if (stream.eatSpace()) return null;
    if (stream.match("--") || stream.match("//")) { stream.skipToEnd(); return "comment"; }
    if (stream.match("/*")) { state.inComment = true; return "comment"; }
    if (stream.match(/^'([^'\\]|\\.)*'?/) || stream.match(/^"([^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^@[\w:.]+/)) return "meta";
    if (stream.match(/^#window\.[\w:]+/) || stream.match(/^#[\w:]+/)) return "typeName";
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?[lLfFdD]?/)) return "number";
    if (stream.match(/^[A-Za-z_][\w]*(:[A-Za-z_]\w*)?/)) {
      const word = stream.current();
      return KEYWORDS.has(word.toLowerCase()) ? "keyword" : (stream.peek() === "(" ? "function" : "variableName");
    }
    stream.next();
    return "operator";
  },
  languageData: { commentTokens: { line: "--" } },
});

/** Positions of a problem (1-based line and column) in the document, clamped to it. */
function span(doc, line, column) {
  const l = doc.line(Math.min(Math.max(line || 1, 1), doc.lines));
  const from = Math.min(l.from + Math.max((column || 1) - 1, 0), l.to);
  const word = /^[\w:.#@'"]+/.exec(doc.sliceString(from, l.to));
  return { from, to: word ? from + word[0].length : Math.min(from + 1, l.to) };
}

/**
 * The editor's checking and completion, fed by `check(text)` (POST /api/validate):
 * `onResult` sees every answer (the page lists the problems and keeps the names).
 */
export function siddhiSupport(check, onResult) {
  let names = null;
  let extensions = { functions: [], windows: [], stream_processors: [] };
  const lint = linter(async (view) => {
    const text = view.state.doc.toString();
    let result;
    try { result = await check(text); } catch (e) { return []; }
    if (view.state.doc.toString() !== text) return [];
    if (result.names) names = result.names;
    if (result.extensions) extensions = result.extensions;
    onResult(result);
    return result.problems.map((p) => ({ ...span(view.state.doc, p.line, p.column), severity: "error", message: p.message }));
  }, { delay: 350 });

  function complete(context) {
    const before = context.matchBefore(/#window\.[\w:]*|#[\w:]*|[\w:]+/);
    if (!before && !context.explicit) return null;
    const from = before ? before.from : context.pos;
    const text = before ? before.text : "";
    let options = [];
    if (text.startsWith("#window.")) {
      options = extensions.windows.map((w) => ({ label: "#window." + w.name, detail: w.detail, info: w.doc, type: "class" }));
    } else if (text.startsWith("#")) {
      options = [{ label: "#window.", type: "keyword" },
        ...extensions.stream_processors.map((s) => ({ label: "#" + s.name, detail: s.detail, info: s.doc, type: "class" }))];
    } else {
      const seen = new Set();
      const add = (label, type, detail) => { if (!seen.has(label)) { seen.add(label); options.push({ label, type, detail }); } };
      if (names) {
        for (const [kind, group] of [["stream", names.streams], ["table", names.tables], ["window", names.windows], ["aggregation", names.aggregations]]) {
          for (const [name, attrs] of Object.entries(group || {})) {
            add(name, "variable", kind);
            for (const a of attrs) add(a.name, "property", `${a.type} of ${name}`);
          }
        }
        for (const f of names.functions || []) add(f, "function", "function of this app");
      }
      for (const f of extensions.functions) options.push({ label: f.name, type: "function", detail: f.detail, info: f.doc, apply: f.name + "(" });
      for (const k of KEYWORDS) add(k, "keyword");
    }
    return { from, options, validFor: /^[#\w:.]*$/ };
  }

  return [siddhiLanguage, lint, lintGutter(), autocompletion({ override: [complete] })];
}
