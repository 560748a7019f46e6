//! The HTTP server of `watch --metrics-addr`: `GET /metrics`, else 404 or 405.

use crate::error::{Error, Result};
use crate::metrics::Metrics;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Listens on `addr`, bound before anything is driven (a bad address fails at once).
pub fn bind(addr: &str) -> Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| Error::Usage(format!("--metrics-addr {addr}: cannot listen there: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::Usage(format!("--metrics-addr {addr}: {e}")))?;
    Ok(listener)
}

pub fn serve(
    listener: std::net::TcpListener,
    metrics: Arc<Metrics>,
    runtime: &tokio::runtime::Runtime,
) -> Result<SocketAddr> {
    let local = listener
        .local_addr()
        .map_err(|e| Error::internal("cannot read the metrics address", e))?;
    let _entered = runtime.enter();
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| Error::internal("cannot serve the metrics", e))?;
    runtime.spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("metrics: cannot accept a connection: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let metrics = metrics.clone();
                    async move { Ok::<_, Infallible>(respond(&metrics, &req)) }
                });
                if let Err(e) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!("metrics: a connection ended: {e}");
                }
            });
        }
    });
    Ok(local)
}

fn respond(metrics: &Metrics, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (req.method(), req.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => {
            (StatusCode::OK, CONTENT_TYPE, metrics.encode())
        }
        (_, "/metrics") => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "only GET /metrics\n".to_string(),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found: the metrics are at /metrics\n".to_string(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, v);
    }
    response
}
