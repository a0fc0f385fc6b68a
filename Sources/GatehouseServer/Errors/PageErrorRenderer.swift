import GatehouseCore
import HTTPTypes
import Hummingbird

/// Errors on the hosted pages: a page in the reader's language, never JSON. What failed stays
/// generic (a link that no longer works, a form to try again); the status says the category.
struct PageErrorRenderer: ErrorRenderer {
    let catalog: TemplateCatalog

    func render(_ error: GatehouseError, request: Request) -> Response {
        let lang = catalog.language(for: request.headers[.acceptLanguage])
        let html = catalog.page(
            "message", lang: lang,
            values: ["title": catalog.string("failed_title", lang: lang), "body": catalog.string("failed_body", lang: lang)])
        var response = PageResponses.html(html, status: HTTPStatusMapping.status(for: error.category))
        if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }
}
