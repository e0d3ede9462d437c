//! What a simulated host answers for a path: a file of a mounted tree (as
//! the copy has it: rewritten, bannered, re-encoded), a directory listing, a
//! redirect to add a missing trailing slash, `robots.txt`, or not found.

use std::collections::BTreeMap;

use url::Url;

use crate::html::{self, Edit};
use crate::plan::{Banner, Host, Mount};
use crate::sources::{Found, Tree};
use crate::time::unix;

/// A page of a collection: which mount served it, at which path inside the
/// tree (after directory index and symbolic links).
pub struct PageRef {
    pub mount: usize,
    pub path: String,
}

/// The server's answer before HTTP framing.
pub struct Served {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
    pub last_modified: Option<i64>,
    pub location: Option<String>,
    pub html: bool,
    pub page: Option<PageRef>,
}

impl Served {
    fn ok(content_type: String, body: Vec<u8>, last_modified: Option<i64>, html: bool) -> Served {
        Served {
            status: 200,
            content_type,
            body,
            last_modified,
            location: None,
            html,
            page: None,
        }
    }
}

/// Answers `url` (on `host`).
pub fn serve(host: &Host, trees: &BTreeMap<&str, Tree>, url: &Url) -> Served {
    let path = percent_decode(url.path());
    if path == "/robots.txt" {
        return robots(host);
    }
    if let Some((index, mount)) = host.mount_for(&path) {
        if let Some(tree) = trees.get(mount.source) {
            let inside = &path[mount.prefix.len()..];
            return serve_mount(host, index, mount, tree, url, inside);
        }
    }
    // A folder above some mount: list what is below it.
    let as_dir = if path.ends_with('/') {
        path.clone()
    } else {
        format!("{path}/")
    };
    let below: Vec<&str> = host
        .mounts
        .iter()
        .filter_map(|mount| mount.prefix.strip_prefix(as_dir.as_str()))
        .collect();
    if below.is_empty() {
        return not_found(host);
    }
    if !path.ends_with('/') {
        return redirect(url, &as_dir);
    }
    let mut children: Vec<String> = below
        .iter()
        .filter_map(|rest| rest.split_inclusive('/').next().map(str::to_string))
        .collect();
    children.sort();
    children.dedup();
    Served::ok(
        host.server.html_type.to_string(),
        listing(host, &path, &children),
        None,
        true,
    )
}

fn serve_mount(
    host: &Host,
    index: usize,
    mount: &Mount,
    tree: &Tree,
    url: &Url,
    inside: &str,
) -> Served {
    let path = url.path();
    if mount.excludes(inside) {
        return not_found(host);
    }
    let found = if inside.is_empty() || inside.ends_with('/') {
        match tree.find(inside.trim_end_matches('/')) {
            Some(Found::Dir { path: dir }) => {
                let index_path = if dir.is_empty() {
                    "index.html".to_string()
                } else {
                    format!("{dir}/index.html")
                };
                match tree.find(&index_path) {
                    Some(found @ Found::File { .. }) => found,
                    _ => {
                        let children: Vec<String> = tree
                            .children(&dir)
                            .into_iter()
                            .filter(|child| !mount.excludes(&format!("{inside}{child}")))
                            .collect();
                        let body = listing(host, path, &children);
                        return Served::ok(html_type(host, mount), body, None, true);
                    }
                }
            }
            _ => return not_found(host),
        }
    } else {
        match tree.find(inside) {
            Some(Found::Dir { .. }) => return redirect(url, &format!("{path}/")),
            Some(found) => found,
            None => return not_found(host),
        }
    };
    let Found::File {
        path: page,
        data,
        mtime,
    } = found
    else {
        return not_found(host);
    };
    let extension = page
        .rsplit_once('.')
        .map_or("", |(_, ext)| ext)
        .to_ascii_lowercase();
    let is_html = matches!(extension.as_str(), "html" | "htm");
    if !is_html {
        return Served::ok(
            content_type_for(&extension).to_string(),
            data.to_vec(),
            Some(mtime),
            false,
        );
    }
    let (body, last_modified) = if mount.rewrites_page(&page) {
        let (year, month, day) = mount.synced;
        (
            rewrite_page(host, mount, url, &page, data),
            unix(year, month, day, 3, 15, 0),
        )
    } else {
        (data.to_vec(), mtime)
    };
    let mut served = Served::ok(html_type(host, mount), body, Some(last_modified), true);
    served.page = Some(PageRef {
        mount: index,
        path: page,
    });
    served
}

fn html_type(host: &Host, mount: &Mount) -> String {
    if mount.latin1 {
        "text/html; charset=ISO-8859-1".to_string()
    } else {
        host.server.html_type.to_string()
    }
}

/// The page as this copy has it: links into left-out subtrees pointing at
/// the primary, the banner, the charset declarations, the line ends.
fn rewrite_page(host: &Host, mount: &Mount, url: &Url, page: &str, data: &[u8]) -> Vec<u8> {
    let tags = html::scan(data);
    let mut edits: Vec<Edit> = Vec::new();
    if let (false, Some(origin)) = (mount.exclude.is_empty(), mount.origin) {
        for link in html::links(&tags) {
            let (Some((start, end)), Ok(target)) = (link.span, url.join(&link.target)) else {
                continue;
            };
            if target.host_str() != Some(host.name) {
                continue;
            }
            let Some(inside) = target.path().strip_prefix(mount.prefix) else {
                continue;
            };
            if !mount.excludes(inside) {
                continue;
            }
            let fragment = target
                .fragment()
                .map(|f| format!("#{f}"))
                .unwrap_or_default();
            let absolute = format!("{origin}{inside}{fragment}");
            edits.push(Edit {
                start,
                end,
                text: html::escape(&absolute).into_bytes(),
            });
        }
    }
    if mount.latin1 {
        edits.extend(html::charset_edits(data, &tags, "iso-8859-1"));
    }
    if let (Some(banner), Some(origin)) = (mount.banner, mount.origin) {
        let original = format!("{origin}{page}");
        let origin_host = Url::parse(origin)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let (at, text) = match banner {
            Banner::Top { by } => (
                html::after_body_start(&tags),
                format!(
                    "\n<div class=\"mirror-banner\" style=\"background:#ffd;\
                    border-bottom:1px solid #cc8;padding:4px 8px;font:small sans-serif\">\
                    Mirrored from <a href=\"{}\">{}</a> by {}. Last synchronised {}.</div>\n",
                    html::escape(&original),
                    html::escape(&origin_host),
                    html::escape(by),
                    sync_text(mount.synced)
                ),
            ),
            Banner::Bottom { by } => (
                html::before_body_end(data),
                format!(
                    "<div class=\"mirror-footer\" style=\"border-top:1px solid #999;margin-top:2em;\
                    font-size:small\">This page is a copy of <a href=\"{0}\">{0}</a>, \
                    provided by {1}. Last synchronised {2}.</div>\n",
                    html::escape(&original),
                    html::escape(by),
                    sync_text(mount.synced)
                ),
            ),
        };
        edits.push(Edit {
            start: at,
            end: at,
            text: text.into_bytes(),
        });
    }
    if mount.revised.contains(&page) {
        let at = html::before_body_end(data);
        let note = format!(
            "<div class=\"page-revision\"><p>Revised {}: this page was updated after the \
            release it documents; the changes will be part of the next release.</p></div>\n",
            sync_text(mount.synced)
        );
        edits.push(Edit {
            start: at,
            end: at,
            text: note.into_bytes(),
        });
    }
    let mut body = html::apply_edits(data, edits);
    if mount.crlf {
        body = html::to_crlf(&body);
    }
    if mount.latin1 {
        body = html::to_latin1(&body);
    }
    body
}

fn sync_text((year, month, day): (i64, u32, u32)) -> String {
    format!("{year:04}-{month:02}-{day:02}")
}

fn robots(host: &Host) -> Served {
    let Some(disallowed) = host.robots else {
        return not_found(host);
    };
    let mut text = String::from("User-agent: *\n");
    if disallowed.is_empty() {
        text.push_str("Disallow:\n");
    }
    for prefix in disallowed {
        text.push_str(&format!("Disallow: {prefix}\n"));
    }
    Served::ok("text/plain".to_string(), text.into_bytes(), None, false)
}

fn redirect(url: &Url, path: &str) -> Served {
    let mut location = url.clone();
    location.set_path(path);
    let body = format!(
        "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n\
        <html><head>\n<title>301 Moved Permanently</title>\n\
        </head><body>\n<h1>Moved Permanently</h1>\n\
        <p>The document has moved <a href=\"{0}\">here</a>.</p>\n\
        </body></html>\n",
        html::escape(location.as_str())
    );
    Served {
        status: 301,
        content_type: "text/html; charset=iso-8859-1".to_string(),
        body: body.into_bytes(),
        last_modified: None,
        location: Some(location.to_string()),
        html: true,
        page: None,
    }
}

fn not_found(host: &Host) -> Served {
    let body = format!(
        "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n\
        <html><head>\n<title>404 Not Found</title>\n\
        </head><body>\n<h1>Not Found</h1>\n\
        <p>The requested URL was not found on this server.</p>\n\
        <hr>\n<address>{} Server at {} Port 80</address>\n\
        </body></html>\n",
        html::escape(host.server.software),
        html::escape(host.name)
    );
    if host.server.soft_404 {
        // A "friendly" error page sent as a success: every missing URL gets
        // the same body with status 200.
        let body = format!(
            "<!DOCTYPE html>\r\n<html><head><title>Page not found</title></head>\r\n\
            <body><h1>Sorry, we could not find that page</h1>\r\n\
            <p>The page may have moved. Start again from the <a href=\"/\">home page</a> of {}.</p></body></html>\r\n",
            html::escape(host.name)
        );
        return Served::ok(
            host.server.html_type.to_string(),
            body.into_bytes(),
            None,
            true,
        );
    }
    Served {
        status: 404,
        content_type: "text/html; charset=iso-8859-1".to_string(),
        body: body.into_bytes(),
        last_modified: None,
        location: None,
        html: true,
        page: None,
    }
}

/// An Apache-style "Index of" page.
fn listing(host: &Host, path: &str, children: &[String]) -> Vec<u8> {
    let title = format!("Index of {}", path.trim_end_matches('/'));
    let title = if title == "Index of" {
        "Index of /".to_string()
    } else {
        title
    };
    let mut out = format!(
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n\
        <html>\n <head>\n  <title>{0}</title>\n </head>\n <body>\n\
        <h1>{0}</h1>\n<ul>",
        html::escape(&title)
    );
    if path != "/" {
        out.push_str("<li><a href=\"../\"> Parent Directory</a></li>\n");
    }
    for child in children {
        out.push_str(&format!(
            "<li><a href=\"{0}\"> {0}</a></li>\n",
            html::escape(child)
        ));
    }
    out.push_str(&format!(
        "</ul>\n<address>{} Server at {} Port 80</address>\n</body></html>\n",
        html::escape(host.server.software),
        html::escape(host.name)
    ));
    out.into_bytes()
}

fn content_type_for(extension: &str) -> &'static str {
    match extension {
        "css" => "text/css",
        "png" => "image/png",
        "gif" => "image/gif",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "txt" => "text/plain",
        "js" => "application/javascript",
        _ => "application/octet-stream",
    }
}

/// `%XX` escapes of a URL path decoded (invalid UTF-8 replaced).
fn percent_decode(path: &str) -> String {
    fn hex(byte: u8) -> Option<u8> {
        (byte as char).to_digit(16).map(|digit| digit as u8)
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(high * 16 + low);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
