//! Text put into HTML and SVG that wasmprof writes: the browser host's
//! page and the reports' pages and graphs.

/// `text` safe as element content or a double-quoted attribute value.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON that cannot end the `<script>` element it is written into.
pub fn script_json(value: &serde_json::Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_scripts_cannot_be_closed_from_inside() {
        assert_eq!(escape("a<b> & \"c\""), "a&lt;b&gt; &amp; &quot;c&quot;");
        let json = script_json(&serde_json::json!({ "x": "</script>&" }));
        assert!(!json.contains('<') && !json.contains('&'), "{json}");
    }
}
