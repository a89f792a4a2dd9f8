//! One request: authenticate, parse the `RunAgentInput`, stream the run as SSE.

use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt;
use hearth_protocol::agui::RunAgentInput;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};

use super::token::BearerToken;
use crate::error::CoreError;
use crate::hearth::Hearth;

/// The largest `RunAgentInput` accepted.
const MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;

type Body = UnsyncBoxBody<Bytes, Infallible>;

pub(super) async fn handle(hearth: Hearth, token: BearerToken, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    if request.method() != Method::POST || request.uri().path() != "/" {
        return Ok(error(StatusCode::NOT_FOUND, "POST a RunAgentInput to / on this endpoint."));
    }
    let authorization = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if !token.admits(authorization) {
        return Ok(error(StatusCode::UNAUTHORIZED, "Send the bearer token shown in Hearth's Settings."));
    }
    let body = match Limited::new(request.into_body(), MAX_INPUT_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(error(StatusCode::PAYLOAD_TOO_LARGE, "The RunAgentInput is over 4 MB or the upload broke off.")),
    };
    let input: RunAgentInput = match serde_json::from_slice(&body) {
        Ok(input) => input,
        Err(err) => return Ok(error(StatusCode::BAD_REQUEST, &format!("The body is not a RunAgentInput ({err})."))),
    };
    let events = match hearth.start_agui_run(input).await {
        Ok(events) => events,
        Err(err) => {
            let status = match err {
                CoreError::InvalidInput(_) => StatusCode::BAD_REQUEST,
                CoreError::Conflict(_) => StatusCode::CONFLICT,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            return Ok(error(status, &err.to_string()));
        }
    };
    // Dropping this stream (the client went away) drops the receiver, which cancels the run.
    let frames = futures::stream::unfold(events, |mut events| async move {
        let event = events.recv().await?;
        let frame = Frame::data(Bytes::from(hearth_protocol::agui::sse::encode(&event)));
        Some((Ok::<_, Infallible>(frame), events))
    })
    .boxed();
    let response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(StreamBody::new(frames).boxed_unsync());
    Ok(response.unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "Hearth could not start the stream.")))
}

fn error(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}
