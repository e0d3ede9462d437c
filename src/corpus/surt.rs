//! SURTs: URLs with their host's labels reversed, so that the URLs of a
//! domain sort together, in the two dialects the tools of web archiving
//! read: Heritrix's (its reject rules' prefixes) and pywb's (the keys of a
//! CDXJ index).

/// A URL split as SURTs read it: `scheme://userinfo@host:port` and the
/// rest (path, query, fragment). Works on a URL's prefix too.
struct Parts<'u> {
    scheme: &'u str,
    userinfo: Option<&'u str>,
    host: &'u str,
    port: Option<&'u str>,
    rest: &'u str,
}

fn split(url: &str) -> Option<Parts<'_>> {
    let (scheme, after) = url.split_once("://")?;
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, authority),
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (host, Some(port))
        }
        _ => (host_port, None),
    };
    Some(Parts {
        scheme,
        userinfo,
        host,
        port,
        rest,
    })
}

/// A host's labels reversed, each followed by `,`: `org,example,www,`.
fn reversed(host: &str) -> String {
    host.rsplit('.').map(|label| format!("{label},")).collect()
}

/// A URL's SURT as Heritrix compares it (`SURT.fromURI`, then `https`
/// read as `http`): `scheme://(tld,domain,sub,:port@userinfo)/path?query`,
/// the host's labels reversed (an IPv4 address as it is), all in lower
/// case. `None` for a URL without `://`. A prefix of a URL gives the prefix
/// of the URLs it starts.
pub fn heritrix(url: &str) -> Option<String> {
    let parts = split(url)?;
    let scheme = if parts.scheme.eq_ignore_ascii_case("https") {
        "http"
    } else {
        parts.scheme
    };
    let ipv4 = parts.host.split('.').count() == 4
        && parts.host.split('.').all(|part| {
            !part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit())
        });
    let mut surt = format!("{scheme}://(");
    if ipv4 {
        surt.push_str(parts.host);
    } else {
        surt.push_str(&reversed(parts.host));
    }
    if let Some(port) = parts.port {
        surt.push(':');
        surt.push_str(port);
    }
    if let Some(userinfo) = parts.userinfo {
        surt.push('@');
        surt.push_str(userinfo);
    }
    surt.push(')');
    surt.push_str(parts.rest);
    Some(surt.to_lowercase())
}

/// The key pywb looks a URL up by (the `surt` package's default form):
/// no scheme, the host in lower case without a leading `www.` and its
/// labels reversed, a port other than the scheme's default, `)`, the path
/// in lower case without a folder's trailing `/`, the query's arguments
/// sorted; no fragment, no user. A name that is no URL with a host
/// (`urn:...`) is its own key, in lower case.
pub fn cdx_key(url: &str) -> String {
    let Some(parts) = split(url) else {
        return url.to_lowercase();
    };
    let scheme = parts.scheme.to_ascii_lowercase();
    let host = parts.host.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    let host = match host.strip_prefix("www") {
        Some(tail) => {
            let digits = tail.trim_start_matches(|c: char| c.is_ascii_digit());
            digits.strip_prefix('.').unwrap_or(host)
        }
        None => host,
    };
    let mut key = reversed(host);
    key.pop();
    let default = matches!(
        (scheme.as_str(), parts.port),
        ("http", Some("80")) | ("https", Some("443"))
    );
    if let Some(port) = parts.port.filter(|_| !default) {
        key.push(':');
        key.push_str(port);
    }
    key.push(')');
    let rest = parts.rest.split('#').next().unwrap_or("");
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    // A folder is its name: `/docs/` is `/docs` (the root stays `/`).
    let path = match path.strip_suffix('/') {
        Some(stripped) if !stripped.is_empty() => stripped,
        Some(_) => "/",
        None if path.is_empty() => "/",
        None => path,
    };
    key.push_str(path);
    if let Some(query) = query.filter(|query| !query.is_empty()) {
        let mut arguments: Vec<&str> = query.split('&').collect();
        arguments.sort_unstable();
        key.push('?');
        key.push_str(&arguments.join("&"));
    }
    key.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_surt_reverses_the_host_and_reads_https_as_http_in_lower_case() {
        for (url, surt) in [
            (
                "http://www.Example.org/Docs/a.html?x=1",
                "http://(org,example,www,)/docs/a.html?x=1",
            ),
            (
                "https://mirror.example.net:8443/pub/",
                "http://(net,example,mirror,:8443)/pub/",
            ),
            ("http://192.0.2.7/docs/", "http://(192.0.2.7)/docs/"),
            ("http://user@example.org/", "http://(org,example,@user)/"),
            ("http://example.org", "http://(org,example,)"),
        ] {
            assert_eq!(heritrix(url).as_deref(), Some(surt), "{url}");
        }
        assert_eq!(heritrix("example.org/docs/"), None);
    }

    #[test]
    fn cdx_keys_are_pywbs() {
        for (url, key) in [
            (
                "http://www.Example.com/Docs/A.html",
                "com,example)/docs/a.html",
            ),
            ("https://example.com", "com,example)/"),
            (
                "http://example.com:8080/x?b=2&a=1#top",
                "com,example:8080)/x?a=1&b=2",
            ),
            ("http://example.com:80/x?", "com,example)/x"),
            ("http://www2.example.org/", "org,example)/"),
            ("http://wwwexample.org/", "org,wwwexample)/"),
            ("urn:Example:seeds", "urn:example:seeds"),
        ] {
            assert_eq!(cdx_key(url), key, "{url}");
        }
    }
}
