//! The plan of the simulated web: which hosts exist, at which address, what
//! server software they answer with, and which documentation trees they serve
//! at which path, copied how. Everything the crawl produces follows from this
//! table, the source archives and the fixed clock.
//!
//! Host names end in `.example` (RFC 2606) and addresses come from the
//! documentation and benchmarking ranges (192.0.2.0/24, 198.51.100.0/24,
//! 203.0.113.0/24, 198.18.0.0/15), so nothing in the crawl points at a real
//! site.
//!
//! The crawl runs on 2026-11-20 from 12:00 UTC (one host after the other),
//! and fetches a few pages of the primaries again on 2026-11-21; every file
//! of the sources is older, and every rewriting mirror synchronised in
//! between (checked when the builder starts). A second crawl of the same web
//! four weeks later ([`second_hosts`], `--crawl second`) finds one mirror
//! updated, one gone, one new and a few pages revised.
//!
//! | host | IP | what it is |
//! | --- | --- | --- |
//! | httpd.apache-project.example | 203.0.113.40 | primary: Apache httpd 2.4.71 manual at /docs/2.4/ |
//! | tomcat.apache-project.example | 203.0.113.41 | primary: Tomcat 10.1.60 docs at /tomcat-10.1-doc/ (same /24, other collection) |
//! | archive.apache-project.example | 203.0.113.45 | older version (httpd 2.4.62), same paths, primary's /24, partly crawled |
//! | apache.mirror.nordu.example | 192.0.2.17 | exact mirror, same paths: httpd 2.4.71 and Tomcat 10.1.60 |
//! | mirror.uni-kiel.example | 198.51.100.7 | prefix copies under /pub/: httpd 2.4.71 (same bytes), Tomcat 10.1.55 (older), Exim 4.98 (banner) |
//! | www.webserver-guides.example | 198.18.7.20 | partial mirrors: httpd guides without mod/programs/developer, Tomcat without config/; links to the rest point at the primaries |
//! | tomcat.mirror.jp-ix.example | 198.19.44.12 | banner mirror (Tomcat 10.1.60), same paths |
//! | www.flask-framework.example | 192.0.2.80 | primary: Flask 3.1.1 docs at / |
//! | flask-framework.example | 192.0.2.80 | alias of the above (same IP, same site), archived as revisit records |
//! | flask.mirror.winhost.example | 192.0.2.81 | copy with CRLF line ends (content-equivalent), primary's /24; soft 404s |
//! | docs.debian-mirror.example | 198.18.120.5 | /usr/share/doc/ browser: Flask 2.2.2 (older), SQLAlchemy 1.4.46 Debian build (other build), partly crawled |
//! | python-docs.mirror.fr-ix.example | 198.19.7.33 | Flask 1.1.2 (older) with a footer, partly crawled; lower-case header names |
//! | docs.sqlalchemy-project.example | 198.18.60.14 | primary: SQLAlchemy 1.4.46 upstream build at /en/14/, partly crawled |
//! | www.exim-mta.example | 192.0.2.130 | primary: Exim 4.98 spec at /exim-html-current/doc/html/spec_html/ |
//! | exim-mta.example | 192.0.2.130 | alias of the above, full responses, partly crawled |
//! | exim.mirror.uk-ix.example | 198.51.100.66 | older version (Exim 4.96) re-encoded as ISO-8859-1 with a footer; no reason phrases |
//! | docs.asciidoctor-project.example | 198.18.200.10 | unrelated: Asciidoctor API docs |
//! | www.debian-policy.example | 198.18.201.7 | unrelated: Debian Policy, served as ISO-8859-1 |
//! | libgcrypt.docs-hosting.example | 198.51.100.200 | unrelated: libgcrypt manual (shared hosting) |
//! | ncurses.docs-hosting.example | 198.51.100.200 | unrelated: ncurses docs (shared hosting) |
//! | putty.docs-hosting.example | 198.51.100.200 | unrelated: PuTTY manual (shared hosting) |
//! | pygments.pyhosting.example | 198.19.90.4 | unrelated: Pygments docs (shared hosting) |
//! | requests.pyhosting.example | 198.19.90.4 | unrelated: Requests docs (shared hosting) |

/// When a crawl runs.
#[derive(Clone, Copy)]
pub struct Schedule {
    /// When the crawl starts: (year, month, day, hour).
    pub start: (i64, u32, u32, u32),
    /// When the second visit to a few pages of the primaries starts.
    pub recrawl: (i64, u32, u32, u32),
    /// Mixed into record ids, so that two crawls of one URL differ (empty
    /// for the first crawl, whose ids predate crawls being numbered).
    pub salt: &'static str,
}

/// The shipped crawl.
pub const FIRST: Schedule = Schedule {
    start: (2026, 11, 20, 12),
    recrawl: (2026, 11, 21, 6),
    salt: "",
};

/// The crawl four weeks later (see [`second_hosts`]).
pub const SECOND: Schedule = Schedule {
    start: (2026, 12, 18, 12),
    recrawl: (2026, 12, 19, 6),
    salt: "second",
};

/// How a simulated server formats its answers.
#[derive(Clone, Copy)]
pub struct ServerStyle {
    /// The `Server` header.
    pub software: &'static str,
    /// `Content-Type` of HTML pages (unless the copy is re-encoded).
    pub html_type: &'static str,
    /// `HTTP/1.1 200 OK` or just `HTTP/1.1 200`.
    pub reason_phrase: bool,
    /// Header names in lower case (as some proxies send them).
    pub lowercase_names: bool,
    /// Apache-style `ETag` and `Accept-Ranges` on files.
    pub etag: bool,
    /// Per cent of 200 responses sent gzip-encoded and/or chunked (chosen by
    /// a hash of the URL).
    pub encoded_percent: u64,
    /// Missing pages answered `200 OK` with a "not found" page (soft 404).
    pub soft_404: bool,
}

const APACHE: ServerStyle = ServerStyle {
    software: "Apache",
    html_type: "text/html",
    reason_phrase: true,
    lowercase_names: false,
    etag: true,
    encoded_percent: 0,
    soft_404: false,
};
const APACHE_DEBIAN: ServerStyle = ServerStyle {
    software: "Apache/2.4.62 (Debian)",
    ..APACHE
};
const NGINX: ServerStyle = ServerStyle {
    software: "nginx/1.24.0",
    html_type: "text/html; charset=utf-8",
    etag: false,
    ..APACHE
};
const LIGHTTPD: ServerStyle = ServerStyle {
    software: "lighttpd/1.4.69",
    html_type: "text/html; charset=UTF-8",
    etag: false,
    ..APACHE
};
const IIS: ServerStyle = ServerStyle {
    software: "Microsoft-IIS/10.0",
    html_type: "text/html",
    etag: false,
    soft_404: true,
    ..APACHE
};
const ENVOY: ServerStyle = ServerStyle {
    software: "envoy",
    html_type: "text/html; charset=utf-8",
    lowercase_names: true,
    etag: false,
    ..APACHE
};
const OPENRESTY: ServerStyle = ServerStyle {
    software: "openresty",
    html_type: "text/html",
    reason_phrase: false,
    etag: false,
    ..APACHE
};
const CADDY: ServerStyle = ServerStyle {
    software: "Caddy",
    html_type: "text/html; charset=utf-8",
    etag: true,
    ..APACHE
};

/// A text inserted into every page of a copy, naming where it comes from.
#[derive(Clone, Copy)]
pub enum Banner {
    /// A `<div>` just after `<body>`.
    Top { by: &'static str },
    /// A `<div>` just before `</body>`.
    Bottom { by: &'static str },
}

/// One documentation tree served by a host under a path prefix.
pub struct Mount {
    /// Path prefix on the host, starting and ending with `/`.
    pub prefix: &'static str,
    /// Archive name in the sources folder (without `.tar.xz`).
    pub source: &'static str,
    /// Collection id in the truth file; `None` for unrelated single manuals.
    pub collection: Option<&'static str>,
    /// Root URL of the primary copy (for banners and for links rewritten by
    /// partial mirrors).
    pub origin: Option<&'static str>,
    /// Subtrees left out (a partial mirror); links into them are rewritten
    /// as absolute links to `origin`.
    pub exclude: &'static [&'static str],
    pub banner: Option<Banner>,
    /// Line ends converted to CRLF.
    pub crlf: bool,
    /// Pages re-encoded as ISO-8859-1.
    pub latin1: bool,
    /// When a rewriting mirror last synchronised (Last-Modified of the pages
    /// it rewrote), as (year, month, day).
    pub synced: (i64, u32, u32),
    /// The crawl of this copy stops after this many fetches.
    pub max_fetches: Option<usize>,
    /// Pages (paths inside the tree) revised on this host since its source
    /// was released: a dated note added before `</body>`.
    pub revised: &'static [&'static str],
}

impl Mount {
    fn new(prefix: &'static str, source: &'static str) -> Mount {
        Mount {
            prefix,
            source,
            collection: None,
            origin: None,
            exclude: &[],
            banner: None,
            crlf: false,
            latin1: false,
            synced: (2026, 9, 28),
            max_fetches: None,
            revised: &[],
        }
    }
    fn of(mut self, collection: &'static str, origin: &'static str) -> Mount {
        self.collection = Some(collection);
        self.origin = Some(origin);
        self
    }
    fn exclude(mut self, subtrees: &'static [&'static str]) -> Mount {
        self.exclude = subtrees;
        self
    }
    fn banner(mut self, banner: Banner) -> Mount {
        self.banner = Some(banner);
        self
    }
    fn crlf(mut self) -> Mount {
        self.crlf = true;
        self
    }
    fn latin1(mut self) -> Mount {
        self.latin1 = true;
        self
    }
    fn synced(mut self, year: i64, month: u32, day: u32) -> Mount {
        self.synced = (year, month, day);
        self
    }
    fn stop_after(mut self, fetches: usize) -> Mount {
        self.max_fetches = Some(fetches);
        self
    }
    fn revise(mut self, pages: &'static [&'static str]) -> Mount {
        self.revised = pages;
        self
    }

    /// Whether this copy rewrites all its HTML (so its pages carry the sync
    /// time).
    pub fn rewrites(&self) -> bool {
        self.banner.is_some() || self.crlf || self.latin1 || !self.exclude.is_empty()
    }

    /// Whether the page at `path` (inside the tree) is rewritten.
    pub fn rewrites_page(&self, path: &str) -> bool {
        self.rewrites() || self.revised.contains(&path)
    }

    /// Whether the copy has a sync date that must lie between its source
    /// and the crawl.
    pub fn is_dated(&self) -> bool {
        self.rewrites() || !self.revised.is_empty()
    }

    /// Whether `path` (inside the tree) lies in a left-out subtree.
    pub fn excludes(&self, path: &str) -> bool {
        self.exclude.iter().any(|subtree| path.starts_with(subtree))
    }

    /// The replica id used in the truth file.
    pub fn replica(&self, host: &str) -> Option<String> {
        self.collection
            .map(|collection| format!("{collection}@{host}{}", self.prefix))
    }
}

/// One host of the simulated web.
pub struct Host {
    pub name: &'static str,
    pub ip: &'static str,
    /// What the host is, for the summary and README.
    pub role: &'static str,
    pub server: ServerStyle,
    pub mounts: Vec<Mount>,
    /// Path of the crawl seed.
    pub seed: &'static str,
    /// Path prefixes disallowed in `/robots.txt`; `None`: no robots.txt (404).
    pub robots: Option<&'static [&'static str]>,
    /// The crawler writes a revisit record when the payload was archived
    /// before (from any URL), as deduplicating crawlers do.
    pub dedup: bool,
    /// Pages fetched again (revisits of the same URL) at the end of the crawl.
    pub recrawl: usize,
}

impl Host {
    /// The mount serving `path`, by longest prefix.
    pub fn mount_for(&self, path: &str) -> Option<(usize, &Mount)> {
        self.mounts
            .iter()
            .enumerate()
            .filter(|(_, mount)| path.starts_with(mount.prefix))
            .max_by_key(|(_, mount)| mount.prefix.len())
    }
}

const APACHE_ORIGIN: &str = "http://httpd.apache-project.example/docs/2.4/";
const TOMCAT_ORIGIN: &str = "http://tomcat.apache-project.example/tomcat-10.1-doc/";
const FLASK_ORIGIN: &str = "http://www.flask-framework.example/";
const EXIM_ORIGIN: &str = "http://www.exim-mta.example/exim-html-current/doc/html/spec_html/";
const SQLALCHEMY_ORIGIN: &str = "http://docs.sqlalchemy-project.example/en/14/";

const APACHE_DOCS: &str = "apache-httpd-2.4-manual";
const TOMCAT_DOCS: &str = "tomcat-10.1-docs";
const FLASK_DOCS: &str = "flask-docs";
const EXIM_SPEC: &str = "exim-spec";
const SQLALCHEMY_DOCS: &str = "sqlalchemy-1.4-docs";

/// The Apache manual links every page to its translations; the sites keep
/// crawlers out of most of them (the rest are 404s: not in the sources).
const APACHE_ROBOTS: &[&str] = &[
    "/docs/2.4/de/",
    "/docs/2.4/es/",
    "/docs/2.4/fr/",
    "/docs/2.4/ja/",
    "/docs/2.4/ko/",
    "/docs/2.4/tr/",
    "/docs/2.4/zh-cn/",
];
const NORDU_ROBOTS: &[&str] = &[
    "/docs/2.4/de/",
    "/docs/2.4/es/",
    "/docs/2.4/fr/",
    "/docs/2.4/ja/",
    "/docs/2.4/ko/",
    "/docs/2.4/tr/",
    "/docs/2.4/zh-cn/",
    "/cgi-bin/",
];
const KIEL_ROBOTS: &[&str] = &[
    "/pub/apache/httpd/docs/2.4/de/",
    "/pub/apache/httpd/docs/2.4/es/",
    "/pub/apache/httpd/docs/2.4/fr/",
    "/pub/apache/httpd/docs/2.4/ja/",
    "/pub/apache/httpd/docs/2.4/ko/",
    "/pub/apache/httpd/docs/2.4/tr/",
    "/pub/apache/httpd/docs/2.4/zh-cn/",
];
const GUIDES_ROBOTS: &[&str] = &[
    "/apache/de/",
    "/apache/es/",
    "/apache/fr/",
    "/apache/ja/",
    "/apache/ko/",
    "/apache/tr/",
    "/apache/zh-cn/",
];
const NOTHING_DISALLOWED: &[&str] = &[];

/// The hosts, in crawl order.
pub fn hosts() -> Vec<Host> {
    vec![
        Host {
            name: "httpd.apache-project.example",
            ip: "203.0.113.40",
            role: "primary (Apache httpd 2.4.71 manual)",
            server: ServerStyle {
                encoded_percent: 4,
                ..APACHE
            },
            mounts: vec![
                Mount::new("/docs/2.4/", "apache-httpd-2.4.71").of(APACHE_DOCS, APACHE_ORIGIN)
            ],
            seed: "/",
            robots: Some(APACHE_ROBOTS),
            dedup: false,
            recrawl: 4,
        },
        Host {
            name: "tomcat.apache-project.example",
            ip: "203.0.113.41",
            role: "primary (Tomcat 10.1.60 docs)",
            server: APACHE,
            mounts: vec![
                Mount::new("/tomcat-10.1-doc/", "tomcat-10.1.60").of(TOMCAT_DOCS, TOMCAT_ORIGIN)
            ],
            seed: "/tomcat-10.1-doc",
            robots: Some(NOTHING_DISALLOWED),
            dedup: false,
            recrawl: 3,
        },
        Host {
            name: "archive.apache-project.example",
            ip: "203.0.113.45",
            role: "older version (httpd 2.4.62), same paths, primary's /24, partly crawled",
            server: APACHE,
            mounts: vec![Mount::new("/docs/2.4/", "apache-httpd-2.4.62")
                .of(APACHE_DOCS, APACHE_ORIGIN)
                .stop_after(110)],
            seed: "/docs/2.4/",
            robots: Some(APACHE_ROBOTS),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "apache.mirror.nordu.example",
            ip: "192.0.2.17",
            role: "exact mirror, same paths (httpd 2.4.71, Tomcat 10.1.60)",
            server: NGINX,
            mounts: vec![
                Mount::new("/docs/2.4/", "apache-httpd-2.4.71").of(APACHE_DOCS, APACHE_ORIGIN),
                Mount::new("/tomcat-10.1-doc/", "tomcat-10.1.60").of(TOMCAT_DOCS, TOMCAT_ORIGIN),
            ],
            seed: "/",
            robots: Some(NORDU_ROBOTS),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "mirror.uni-kiel.example",
            ip: "198.51.100.7",
            role: "prefix copies: httpd 2.4.71 exact, Tomcat 10.1.55 older, Exim 4.98 banner",
            server: APACHE_DEBIAN,
            mounts: vec![
                Mount::new("/pub/apache/httpd/docs/2.4/", "apache-httpd-2.4.71")
                    .of(APACHE_DOCS, APACHE_ORIGIN),
                Mount::new("/pub/apache/tomcat/tomcat-10.1-doc/", "tomcat-10.1.55")
                    .of(TOMCAT_DOCS, TOMCAT_ORIGIN),
                Mount::new(
                    "/pub/exim/exim-html-current/doc/html/spec_html/",
                    "exim-4.98",
                )
                .of(EXIM_SPEC, EXIM_ORIGIN)
                .banner(Banner::Top {
                    by: "the Kiel University computing centre mirror service",
                })
                .synced(2026, 9, 30),
            ],
            seed: "/",
            robots: Some(KIEL_ROBOTS),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "www.webserver-guides.example",
            ip: "198.18.7.20",
            role: "partial mirrors: httpd (no mod/, programs/, developer/), Tomcat (no config/)",
            server: LIGHTTPD,
            mounts: vec![
                Mount::new("/apache/", "apache-httpd-2.4.71")
                    .of(APACHE_DOCS, APACHE_ORIGIN)
                    .exclude(&["en/mod/", "en/programs/", "en/developer/"])
                    .synced(2026, 11, 14),
                Mount::new("/tomcat/", "tomcat-10.1.60")
                    .of(TOMCAT_DOCS, TOMCAT_ORIGIN)
                    .exclude(&["config/"])
                    .synced(2026, 11, 14),
            ],
            seed: "/",
            robots: Some(GUIDES_ROBOTS),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "tomcat.mirror.jp-ix.example",
            ip: "198.19.44.12",
            role: "banner mirror, same paths (Tomcat 10.1.60)",
            server: NGINX,
            mounts: vec![Mount::new("/tomcat-10.1-doc/", "tomcat-10.1.60")
                .of(TOMCAT_DOCS, TOMCAT_ORIGIN)
                .banner(Banner::Top {
                    by: "JP-IX Open Source Mirror",
                })
                .synced(2026, 10, 1)],
            seed: "/tomcat-10.1-doc",
            robots: None,
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "www.flask-framework.example",
            ip: "192.0.2.80",
            role: "primary (Flask 3.1.1 docs)",
            server: CADDY,
            mounts: vec![Mount::new("/", "flask-3.1.1").of(FLASK_DOCS, FLASK_ORIGIN)],
            seed: "/",
            robots: Some(&["/usr/"]),
            dedup: false,
            recrawl: 3,
        },
        Host {
            name: "flask-framework.example",
            ip: "192.0.2.80",
            role: "alias of www.flask-framework.example (revisit records)",
            server: CADDY,
            mounts: vec![Mount::new("/", "flask-3.1.1").of(FLASK_DOCS, FLASK_ORIGIN)],
            seed: "/",
            robots: Some(&["/usr/"]),
            dedup: true,
            recrawl: 0,
        },
        Host {
            name: "flask.mirror.winhost.example",
            ip: "192.0.2.81",
            role: "CRLF copy (Flask 3.1.1, content-equivalent), primary's /24; soft 404s",
            server: IIS,
            mounts: vec![Mount::new("/", "flask-3.1.1")
                .of(FLASK_DOCS, FLASK_ORIGIN)
                .crlf()
                .synced(2026, 11, 10)],
            seed: "/",
            robots: None,
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "docs.debian-mirror.example",
            ip: "198.18.120.5",
            role: "prefix copies: Flask 2.2.2 (older), SQLAlchemy Debian build (partly crawled)",
            server: APACHE_DEBIAN,
            mounts: vec![
                Mount::new("/usr/share/doc/python-flask-doc/html/", "flask-2.2.2")
                    .of(FLASK_DOCS, FLASK_ORIGIN),
                Mount::new(
                    "/usr/share/doc/python-sqlalchemy-doc/html/",
                    "sqlalchemy-1.4.46-debian",
                )
                .of(SQLALCHEMY_DOCS, SQLALCHEMY_ORIGIN)
                .stop_after(55),
            ],
            seed: "/usr/share/doc/",
            robots: None,
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "python-docs.mirror.fr-ix.example",
            ip: "198.19.7.33",
            role: "older version (Flask 1.1.2) with footer, other prefix; partly crawled",
            server: ENVOY,
            mounts: vec![Mount::new("/flask/1.1/", "flask-1.1.2")
                .of(FLASK_DOCS, FLASK_ORIGIN)
                .banner(Banner::Bottom {
                    by: "FR-IX Python documentation mirror",
                })
                .synced(2026, 9, 25)
                .stop_after(45)],
            seed: "/flask/1.1",
            robots: Some(&["/usr/"]),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "docs.sqlalchemy-project.example",
            ip: "198.18.60.14",
            role: "primary (SQLAlchemy 1.4.46 upstream build); partly crawled",
            server: NGINX,
            mounts: vec![Mount::new("/en/14/", "sqlalchemy-1.4.46-pypi")
                .of(SQLALCHEMY_DOCS, SQLALCHEMY_ORIGIN)
                .stop_after(55)],
            seed: "/en/14/",
            robots: Some(NOTHING_DISALLOWED),
            dedup: false,
            recrawl: 2,
        },
        Host {
            name: "www.exim-mta.example",
            ip: "192.0.2.130",
            role: "primary (Exim 4.98 specification)",
            server: APACHE,
            mounts: vec![
                Mount::new("/exim-html-current/doc/html/spec_html/", "exim-4.98")
                    .of(EXIM_SPEC, EXIM_ORIGIN),
            ],
            seed: "/exim-html-current/doc/html/spec_html/",
            robots: Some(NOTHING_DISALLOWED),
            dedup: false,
            recrawl: 3,
        },
        Host {
            name: "exim-mta.example",
            ip: "192.0.2.130",
            role: "alias of www.exim-mta.example (full responses); partly crawled",
            server: APACHE,
            mounts: vec![
                Mount::new("/exim-html-current/doc/html/spec_html/", "exim-4.98")
                    .of(EXIM_SPEC, EXIM_ORIGIN)
                    .stop_after(40),
            ],
            seed: "/exim-html-current/doc/html/spec_html",
            robots: Some(NOTHING_DISALLOWED),
            dedup: false,
            recrawl: 0,
        },
        Host {
            name: "exim.mirror.uk-ix.example",
            ip: "198.51.100.66",
            role: "older version (Exim 4.96), ISO-8859-1, footer; no reason phrases",
            server: OPENRESTY,
            mounts: vec![
                Mount::new("/exim-html-current/doc/html/spec_html/", "exim-4.96")
                    .of(EXIM_SPEC, EXIM_ORIGIN)
                    .banner(Banner::Bottom {
                        by: "UK-IX mirror service",
                    })
                    .latin1()
                    .synced(2026, 8, 17),
            ],
            seed: "/exim-html-current/doc/html/spec_html/",
            robots: None,
            dedup: false,
            recrawl: 0,
        },
        single(
            "docs.asciidoctor-project.example",
            "198.18.200.10",
            "asciidoctor-2.0.18",
            "/api/",
            CADDY,
        ),
        Host {
            mounts: vec![Mount::new("/doc/debian-policy/", "debian-policy-4.6.2.0")
                .latin1()
                .synced(2026, 3, 2)],
            ..single(
                "www.debian-policy.example",
                "198.18.201.7",
                "debian-policy-4.6.2.0",
                "/doc/debian-policy/",
                APACHE_DEBIAN,
            )
        },
        single(
            "libgcrypt.docs-hosting.example",
            "198.51.100.200",
            "libgcrypt-1.10.1",
            "/manual/",
            APACHE,
        ),
        single(
            "ncurses.docs-hosting.example",
            "198.51.100.200",
            "ncurses-6.4",
            "/",
            APACHE,
        ),
        single(
            "putty.docs-hosting.example",
            "198.51.100.200",
            "putty-0.78",
            "/",
            APACHE,
        ),
        single(
            "pygments.pyhosting.example",
            "198.19.90.4",
            "pygments-2.14.0",
            "/docs/",
            NGINX,
        ),
        single(
            "requests.pyhosting.example",
            "198.19.90.4",
            "requests-2.28.1",
            "/",
            NGINX,
        ),
    ]
}

/// The hosts of the second crawl, four weeks on ([`SECOND`]): the Kiel mirror
/// updated its Tomcat copy from 10.1.55 to 10.1.60 (the primary's version),
/// the JP-IX mirror is gone, a new exact mirror of the Exim specification
/// appeared at NL-IX, and three pages of the Requests docs were revised.
/// Everything else is served as in the first crawl.
pub fn second_hosts() -> Vec<Host> {
    let mut hosts: Vec<Host> = hosts()
        .into_iter()
        .filter(|host| host.name != DROPPED_MIRROR)
        .collect();
    for host in &mut hosts {
        match host.name {
            "mirror.uni-kiel.example" => {
                host.role =
                    "prefix copies: httpd 2.4.71 exact, Tomcat 10.1.60 (updated), Exim 4.98 banner";
                for mount in &mut host.mounts {
                    if mount.source == "tomcat-10.1.55" {
                        mount.source = "tomcat-10.1.60";
                    }
                }
            }
            "requests.pyhosting.example" => {
                host.role = "unrelated single manual, three pages revised";
                host.mounts = vec![Mount::new("/", "requests-2.28.1")
                    .revise(REVISED_PAGES)
                    .synced(2026, 12, 10)];
            }
            _ => {}
        }
    }
    let after = hosts
        .iter()
        .position(|host| host.name == "exim.mirror.uk-ix.example")
        .map_or(hosts.len(), |index| index + 1);
    hosts.insert(
        after,
        Host {
            name: ADDED_MIRROR,
            ip: "198.19.60.21",
            role: "exact mirror, same paths (Exim 4.98), new in the second crawl",
            server: NGINX,
            mounts: vec![
                Mount::new("/exim-html-current/doc/html/spec_html/", "exim-4.98")
                    .of(EXIM_SPEC, EXIM_ORIGIN),
            ],
            seed: "/exim-html-current/doc/html/spec_html/",
            robots: None,
            dedup: false,
            recrawl: 0,
        },
    );
    hosts
}

/// The mirror the second crawl no longer finds.
pub const DROPPED_MIRROR: &str = "tomcat.mirror.jp-ix.example";
/// The mirror new in the second crawl.
pub const ADDED_MIRROR: &str = "exim.mirror.nl-ix.example";
/// Pages of the Requests docs revised before the second crawl.
pub const REVISED_PAGES: &[&str] = &[
    "community/faq.html",
    "community/updates.html",
    "user/install.html",
];

fn single(
    name: &'static str,
    ip: &'static str,
    source: &'static str,
    prefix: &'static str,
    server: ServerStyle,
) -> Host {
    Host {
        name,
        ip,
        role: "unrelated single manual",
        server,
        mounts: vec![Mount::new(prefix, source)],
        seed: "/",
        robots: None,
        dedup: false,
        recrawl: 0,
    }
}
