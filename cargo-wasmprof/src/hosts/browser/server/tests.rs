//! Each rule of the server, tried over a real socket.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};

use super::*;

const TOKEN: &str = "secret-token-of-this-run";

struct Fixture {
    _dir: tempfile::TempDir,
    outside: PathBuf,
    uploads: PathBuf,
    server: Server,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("files");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(
        root.join("index.html"),
        "<html><head><title>t</title></head><body>hi</body></html>",
    )
    .unwrap();
    std::fs::write(root.join("pkg/app_bg.wasm"), b"\0asm-original").unwrap();
    let outside = dir.path().join("secret.txt");
    std::fs::write(&outside, "not for the web").unwrap();
    // Links out of the site (Windows needs a privilege to make them).
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("linkdir")).unwrap();
    }
    let instrumented = dir.path().join("instrumented_bg.wasm");
    std::fs::write(&instrumented, b"\0asm-instrumented").unwrap();
    let uploads = dir.path().join("uploads");
    let files = ServedFiles {
        root,
        generated: HashMap::from([("/__wasmprof/host-api.js".to_owned(), b"// api".to_vec())]),
        substitutes: vec![Substitute(Box::new(move |path| {
            path.ends_with("/app_bg.wasm").then(|| instrumented.clone())
        }))],
        inject_into_html: Some("<script>injected</script>".into()),
        token: TOKEN.into(),
        upload_dir: uploads.clone(),
    };
    let server = Server::start(IpAddr::V4(Ipv4Addr::LOCALHOST), files).unwrap();
    Fixture {
        _dir: dir,
        outside,
        uploads,
        server,
    }
}

/// Sends a raw request and returns the status code and the whole response.
fn send(server: &Server, request: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let code = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, text)
}

fn get(server: &Server, path: &str) -> (u16, String) {
    let host = server.addr();
    send(
        server,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        b"",
    )
}

#[test]
fn serves_the_site_cross_origin_isolated_with_the_host_api_injected() {
    let f = fixture();
    let (code, text) = get(&f.server, "/");
    assert_eq!(code, 200, "{text}");
    assert!(
        text.contains("<head><script>injected</script><title>"),
        "{text}"
    );
    assert!(
        text.contains("Cross-Origin-Opener-Policy: same-origin"),
        "{text}"
    );
    assert!(
        text.contains("Cross-Origin-Embedder-Policy: require-corp"),
        "{text}"
    );
    let (code, text) = get(&f.server, "/__wasmprof/host-api.js");
    assert_eq!(code, 200);
    assert!(text.contains("text/javascript"), "{text}");
}

#[test]
fn the_instrumented_module_replaces_the_pages_own_as_application_wasm() {
    let f = fixture();
    let (code, text) = get(&f.server, "/pkg/app_bg.wasm");
    assert_eq!(code, 200);
    assert!(text.contains("Content-Type: application/wasm"), "{text}");
    assert!(text.ends_with("asm-instrumented"), "{text}");
}

#[test]
fn paths_outside_the_site_are_refused() {
    let f = fixture();
    for path in [
        "/../secret.txt",
        "/pkg/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/pkg%2f..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/link.txt",
        "/linkdir/secret.txt",
        "/pkg/./app.js",
        "/nothing-here.html",
    ] {
        let (code, text) = get(&f.server, path);
        assert!(code >= 400, "{path} was served:\n{text}");
        assert!(!text.contains("not for the web"), "{path} leaked the file");
    }
    assert!(f.outside.exists());
}

#[test]
fn requests_for_another_host_name_are_refused() {
    let f = fixture();
    let port = f.server.addr().port();
    for host in [
        format!("attacker.example:{port}"),
        format!("127.0.0.2:{port}"),
        "127.0.0.1:1".to_owned(),
        "127.0.0.1".to_owned(),
    ] {
        let (code, _) = send(
            &f.server,
            &format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
            b"",
        );
        assert_eq!(code, 421, "Host: {host}");
    }
    let (code, _) = send(&f.server, "GET / HTTP/1.0\r\n\r\n", b"");
    assert_eq!(code, 421, "no Host at all");
    let (code, _) = send(
        &f.server,
        &format!("GET / HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
        b"",
    );
    assert_eq!(
        code, 200,
        "localhost is the loopback address it is bound to"
    );
}

fn post(f: &Fixture, token: Option<&str>, body: &[u8], claimed_length: usize) -> (u16, String) {
    let host = f.server.addr();
    let token = token
        .map(|t| format!("{TOKEN_HEADER}: {t}\r\n"))
        .unwrap_or_default();
    send(
        &f.server,
        &format!(
            "POST {UPLOAD_PATH} HTTP/1.1\r\nHost: {host}\r\n{token}Content-Length: {claimed_length}\r\nConnection: close\r\n\r\n"
        ),
        body,
    )
}

#[test]
fn an_upload_needs_the_token_and_is_saved_under_a_name_the_server_chooses() {
    let f = fixture();
    assert_eq!(post(&f, None, b"WPRF", 4).0, 403);
    assert_eq!(post(&f, Some("guess"), b"WPRF", 4).0, 403);
    assert!(!f.uploads.exists(), "nothing written for a refused upload");
    let (code, text) = post(&f, Some(TOKEN), b"WPRF1234", 8);
    assert_eq!(code, 200, "{text}");
    let upload = f.server.uploads.try_recv().unwrap();
    assert_eq!(upload.path, f.uploads.join("snapshot-0.bin"));
    assert_eq!(std::fs::read(&upload.path).unwrap(), b"WPRF1234");
    post(&f, Some(TOKEN), b"second", 6);
    assert_eq!(
        f.server.uploads.try_recv().unwrap().path,
        f.uploads.join("snapshot-1.bin")
    );
}

#[test]
fn an_oversized_upload_is_refused_before_it_is_read() {
    let f = fixture();
    let (code, _) = post(&f, Some(TOKEN), b"", (MAX_UPLOAD_BYTES + 1) as usize);
    assert_eq!(code, 413);
    assert!(f.server.uploads.try_recv().is_err());
}

#[test]
fn other_methods_are_refused() {
    let f = fixture();
    let host = f.server.addr();
    let (code, _) = send(
        &f.server,
        &format!("DELETE /index.html HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        b"",
    );
    assert_eq!(code, 405);
}

#[test]
fn the_host_api_goes_first_in_the_head_or_the_page() {
    assert_eq!(
        inject("<html><HEAD lang=x>t</HEAD></html>", "S"),
        "<html><HEAD lang=x>St</HEAD></html>"
    );
    assert_eq!(
        inject("<html><body>b</body></html>", "S"),
        "<html>S<body>b</body></html>"
    );
    assert_eq!(inject("<p>bare</p>", "S"), "S<p>bare</p>");
}

#[test]
fn the_server_stops_with_the_run() {
    let f = fixture();
    let addr = f.server.addr();
    drop(f.server);
    // The listening socket closes on the server's accept thread, a moment
    // after the drop returns.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while TcpStream::connect(addr).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "{addr} still accepts connections"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Reads one response with a `Content-Length` body from a kept-alive
/// connection, or times out.
fn read_response(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut data = Vec::new();
    let mut byte = [0u8; 1];
    while !data.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte)?;
        data.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&data).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body)?;
    Ok(head)
}

#[test]
fn many_kept_alive_connections_at_once_are_all_served() {
    // As a browser loads a page with many modules: several connections
    // opened at once, each kept alive for more requests, in rounds.
    let f = fixture();
    let host = f.server.addr();
    // Idle connections a browser keeps open hold on to their sockets.
    let mut idle = Vec::new();
    for round in 0..20 {
        let mut streams: Vec<TcpStream> =
            (0..8).map(|_| TcpStream::connect(host).unwrap()).collect();
        for _ in 0..3 {
            for stream in &mut streams {
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .unwrap();
                stream
                    .write_all(
                        format!("GET /index.html HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
                    )
                    .unwrap();
            }
            for (i, stream) in streams.iter_mut().enumerate() {
                let head = read_response(stream)
                    .unwrap_or_else(|e| panic!("round {round}, connection {i}: {e}"));
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            }
        }
        idle.extend(streams);
    }
}

#[test]
fn a_recorded_window_travels_in_a_header_beside_its_two_snapshots() {
    let f = fixture();
    let host = f.server.addr();
    let body = b"OPENCLOSING";
    let header = |value: &str| {
        format!(
            "POST {UPLOAD_PATH} HTTP/1.1\r\nHost: {host}\r\n{TOKEN_HEADER}: {TOKEN}\r\n{}: {value}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            UploadedWindow::HEADER,
            body.len()
        )
    };
    let (code, text) = send(&f.server, &header("1200.5:4800:4"), body);
    assert_eq!(code, 200, "{text}");
    let upload = f.server.uploads.try_recv().unwrap();
    assert_eq!(
        upload.window,
        Some(UploadedWindow {
            start_ms: 1200.5,
            end_ms: 4800.0,
            opening_len: 4
        })
    );
    for bad in [
        "4800:1200:4",
        "0:1:99",
        "a:b:c",
        "0:1",
        "0:1:2:3",
        "NaN:1:2",
    ] {
        let (code, text) = send(&f.server, &header(bad), body);
        assert_eq!(code, 400, "{bad}: {text}");
        assert!(f.server.uploads.try_recv().is_err(), "{bad} was accepted");
    }
}
