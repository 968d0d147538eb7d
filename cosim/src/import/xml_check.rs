//! A first reading of modelDescription.xml before the `fmi` crate's
//! schema parses it: well-formedness with the line and column of the
//! first fault (the schema's own errors carry no position), and the
//! `fmiVersion` of the root element. Tokens come from the `xmlparser`
//! crate; this module only keeps the stack of open elements.

/// Line and column (from 1) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |n| before.len() - n - 1)
        + 1;
    (line, col)
}

/// Checks that `xml` is well formed (every element closed, in order) and
/// returns the root element's `fmiVersion` (empty when absent). The
/// error reads `LINE:COLUMN: what is wrong`.
pub(crate) fn check(xml: &str) -> Result<String, String> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut version = None;
    let mut started = false;
    let mut root_done = false;
    for token in xmlparser::Tokenizer::from(xml) {
        let token = token.map_err(|e| {
            let p = e.pos();
            format!("{}:{}: {e}", p.row, p.col)
        })?;
        match token {
            xmlparser::Token::ElementStart { local, span, .. } => {
                if root_done {
                    let (l, c) = line_col(xml, span.start());
                    return Err(format!("{l}:{c}: a second root element <{local}>"));
                }
                open.push((local.as_str(), span.start()));
                started = true;
            }
            xmlparser::Token::Attribute { local, value, .. }
                if open.len() == 1 && local.as_str() == "fmiVersion" && version.is_none() =>
            {
                version = Some(value.as_str().to_string());
            }
            xmlparser::Token::ElementEnd { end, span } => match end {
                xmlparser::ElementEnd::Open => {}
                xmlparser::ElementEnd::Empty => {
                    open.pop();
                }
                xmlparser::ElementEnd::Close(_, local) => {
                    let (l, c) = line_col(xml, span.start());
                    match open.pop() {
                        Some((name, _)) if name == local.as_str() => {}
                        Some((name, at)) => {
                            let (ol, oc) = line_col(xml, at);
                            return Err(format!(
                                "{l}:{c}: </{local}> closes <{name}> opened at {ol}:{oc}"
                            ));
                        }
                        None => return Err(format!("{l}:{c}: </{local}> closes nothing")),
                    }
                }
            },
            _ => {}
        }
        if open.is_empty() && started {
            root_done = true;
        }
    }
    if let Some((name, at)) = open.last() {
        let (l, c) = line_col(xml, *at);
        let (el, ec) = line_col(xml, xml.len());
        return Err(format!(
            "{el}:{ec}: the text ends inside <{name}> opened at {l}:{c}"
        ));
    }
    Ok(version.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn faults_are_located() {
        assert_eq!(
            check("<fmiModelDescription fmiVersion=\"2.0\"><A/></fmiModelDescription>").unwrap(),
            "2.0"
        );
        let e = check("<fmiModelDescription fmiVersion=\"3.0\">\n  <A>\n</fmiModelDescription>")
            .unwrap_err();
        assert_eq!(e, "3:1: </fmiModelDescription> closes <A> opened at 2:3");
        let e = check("<fmiModelDescription fmiVersion=\"2.0\">\n<A/>").unwrap_err();
        assert!(
            e.starts_with("2:5: the text ends inside <fmiModelDescription>"),
            "{e}"
        );
        let e = check("<fmiModelDescription fmiVersion=\"2.0\">\n<A b=\"1></A>").unwrap_err();
        assert!(e.starts_with("2:"), "{e}");
    }
}
