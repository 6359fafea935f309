export { EditorView, keymap, lineNumbers } from "@codemirror/view";
export { EditorState, Compartment } from "@codemirror/state";
export { basicSetup } from "codemirror";
export { StreamLanguage, HighlightStyle, syntaxHighlighting } from "@codemirror/language";
export { linter, lintGutter, forceLinting, diagnosticCount } from "@codemirror/lint";
export { autocompletion } from "@codemirror/autocomplete";
