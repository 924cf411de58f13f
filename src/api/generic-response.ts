/**
 * The reason and message kube's NewGenericServerResponse gives an answer of another server (a
 * webhook, a kubelet) that carried no Status of its own, by status code: `serverMessage` is the
 * answer's text (a 403 says it), `verb` the request's method (a POST's 409 is AlreadyExists).
 */
export function genericResponse(code: number, serverMessage: string, verb = 'POST'): [string, string] {
  switch (code) {
    case 409:
      return [verb === 'POST' ? 'AlreadyExists' : 'Conflict', 'the server reported a conflict'];
    case 404:
      return ['NotFound', 'the server could not find the requested resource'];
    case 400:
      return ['BadRequest', 'the server rejected our request for an unknown reason'];
    case 401:
      return ['Unauthorized', 'the server has asked for the client to provide credentials'];
    case 403:
      return ['Forbidden', serverMessage];
    case 405:
      return ['MethodNotAllowed', 'the server does not allow this method on the requested resource'];
    case 422:
      return ['Invalid', 'the server rejected our request due to an error in our request'];
    case 503:
      return ['ServiceUnavailable', 'the server is currently unable to handle the request'];
    case 504:
      return ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'];
    case 429:
      return ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'];
    default:
      if (code >= 500) return ['InternalError', `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`];
      return ['', `the server responded with the status code ${code} but did not return more information`];
  }
}
