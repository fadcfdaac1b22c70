// Package simulator is an in-memory stand-in for every vendor API of
// PROVIDERS.md, served as one http.Handler (`notifyd simulate`,
// API-DECISIONS.md section 7). It speaks each vendor's wire format and
// checks what the adapters send independently of them: it is written from
// PROVIDERS.md and imports nothing of internal/provider.
//
// A provider account's base_url replaces only scheme and host, so one
// simulator address serves every vendor at the documented paths; both vendorA
// hosts (SMS and AlimTalk) are served at the same root.
//
// # Vendor endpoints
//
// Secrets cannot be known here, so credentials are checked for presence and
// shape only. A rejected request is never recorded; an accepted one is
// recorded as one Message per recipient.
//
//	kind           endpoint                                    validates
//	vendora_sms    POST /send/                                 form (urlencoded or multipart); key and user_id (or userid);
//	                                                           sender (digits/hyphens, <=16 bytes); msg 1-2,000 bytes (EUC-KR
//	                                                           count: non-ASCII = 2); msg_type SMS|LMS|MMS or empty (auto:
//	                                                           image -> MMS, >90 bytes -> LMS); title <=44 bytes; rdate/rtime
//	                                                           format; receiver 1-1,000 comma-separated (invalid numbers
//	                                                           counted in error_cnt); destination fills %고객명%
//	               POST /send_mass/                            as above plus cnt 1-500, msg_type required, rec_N/msg_N
//	               POST /remain/                               key, user_id -> SMS_CNT, LMS_CNT, MMS_CNT
//	vendora_msgr   POST /akv10/token/create/{n}/{y|m|d|h|i|s}/ apikey, userid -> {"code":0,"token","urlencode"}; tokens are
//	                                                           signed, not stored: only the issuing simulator accepts them
//	               POST /akv10/alimtalk/send/                  apikey, userid, token (missing -10, unknown/expired -107),
//	                                                           senderkey, tpl_code, sender, receiver_N (N 1-500) with
//	                                                           message_N, optional subject_N, recvname_N, button_N (JSON
//	                                                           {"button":[...]}); -> info.mid/scnt/fcnt (no valid receiver:
//	                                                           -301; missing field: -99)
//	               POST /akv10/heartinfo/                      apikey, userid, token -> list.SMS_CNT/LMS_CNT/MMS_CNT/ALT_CNT
//	vendorb_sms    POST /messages/v4/send                      Authorization HMAC-SHA256 (or HMAC-MD5) apiKey, date (RFC 3339,
//	vendorb_msgr   POST /messages/v4/send-many                 +-15 min), salt (12-64 bytes), signature (64 or 32 lower-case
//	               POST /messages/v4/send-many/detail          hex, not reused within 15 min) -> else 403 InvalidAPIKey,
//	               GET  /cash/v1/balance                       SignatureDoesNotMatch, RequestTimeTooSkewed,
//	                                                           DuplicatedSignature. Per message: to, from (not for ATA),
//	                                                           text, known type; ATA needs kakaoOptions.pfId (1041),
//	                                                           templateId (1042), variables "#{key}" -> string (1011);
//	                                                           customFields key <=30, value <=100 chars. Type ATA (explicit
//	                                                           or auto-detected from kakaoOptions.templateId) is
//	                                                           vendorb_msgr, everything else vendorb_sms. Refused messages
//	                                                           get statusCode 1010/1011/1041/1042 (HTTP 200); a body that is
//	                                                           not JSON or has no message(s) is 400 ValidationError.
//	push_gateway   POST /token                                 grant_type jwt-bearer; assertion: three unpadded base64url parts, header
//	                                                           alg RS256, claims iss, scope (firebase.messaging or
//	                                                           cloud-platform), aud (a URL whose path is /token), iat, exp
//	                                                           (exp-iat <= 3600, not expired); the RSA signature is not
//	                                                           verified -> {"access_token","expires_in":3599,"token_type"};
//	                                                           else 400 invalid_grant
//	               POST /v1/projects/{p}/messages:send         Bearer token issued by this simulator (else 401
//	                                                           UNAUTHENTICATED); no unknown JSON names (like FCM's proto
//	                                                           parser); exactly one of token/topic/condition; data values
//	                                                           strings; notification+data <= 4,096 bytes; validate_only
//	                                                           answers .../messages/fake_message_id and records nothing
//	mailx_email    POST /emails, POST /emails/batch            Bearer key; from parses ("Name <addr>" or addr, else 422
//	                                                           invalid_from_address); to 1-50 (string or array), cc, bcc,
//	                                                           reply_to parse; subject; html or text; tags; headers object.
//	                                                           Batch: 1-100, no attachments/scheduled_at, x-batch-validation
//	                                                           strict (first error refuses all) or permissive (data = sent
//	                                                           emails in input order, errors = [{index,message}])
//	maily_email    POST /v2/email/outbound-emails              Authorization AWS4-HMAC-SHA256 Credential=<id>/<yyyymmdd>/
//	                                                           <region>/ses/aws4_request, SignedHeaders (sorted, lower-case,
//	                                                           with host and x-amz-date), Signature (64 lower-case hex);
//	                                                           X-Amz-Date (basic ISO 8601, same day as the credential,
//	                                                           +-15 min); exactly one of Content.Simple/Raw/Template;
//	                                                           FromEmailAddress and all addresses ASCII (RFC 2047 for
//	                                                           non-ASCII names); 1-50 recipients; Subject and Text or Html
//	mailz_email    POST /email, POST /email/batch              X-Postmark-Server-Token; From, To (comma-separated), Cc, Bcc,
//	                                                           ReplyTo parse; <=50 recipients; TextBody or HtmlBody; Headers
//	                                                           as [{Name,Value}] (an object is invalid JSON input, 402).
//	                                                           Batch: 1-500, per-message results in input order
//	chata_webhook  POST /services/{T}/{B}/{X}                  JSON or form payload=; text, blocks or attachments (no_text,
//	                                                           invalid_blocks, invalid_payload) -> 200 "ok"
//	chata_bot      POST /api/chat.postMessage                  Bearer xoxb- token (form posts may use a token field; missing
//	                                                           not_authed, other invalid_auth, HTTP 200); channel
//	                                                           (channel_not_found); text/blocks (no_text, invalid_blocks,
//	                                                           msg_too_long) -> ok, channel id, ts, message
//	chatb_webhook  POST /api[/vN]/webhooks/{id}/{token}        id a snowflake (else 400 50035); wait true|false; JSON (or
//	                                                           multipart payload_json): content <=2,000, embeds <=10, not
//	                                                           empty (50006) -> 200 message with wait=true, else 204
//	chatb_bot      POST /api[/vN]/channels/{id}/messages       Authorization: Bot <token> (else 401 code 0); channel a
//	                                                           snowflake (else 400 50035); content as for webhooks
//
// Sending identities of the e-mail kinds (one vendor account per kind; an
// identity is pending until the control API verifies it):
//
//	maily_email    POST /v2/email/identities                   CreateEmailIdentity {EmailIdentity}: an address or a domain
//	                                                           (Easy DKIM: three tokens) -> {IdentityType,
//	                                                           VerifiedForSendingStatus, DkimAttributes}; a second one 400
//	                                                           AlreadyExistsException. Same SigV4 checks as SendEmail
//	               GET  /v2/email/identities                   ListEmailIdentities -> {EmailIdentities:[{IdentityType,
//	                                                           IdentityName, SendingEnabled, VerificationStatus}]}
//	               GET  /v2/email/identities/{name}            GetEmailIdentity -> VerificationStatus PENDING|SUCCESS,
//	                                                           VerifiedForSendingStatus, DkimAttributes{Status, Tokens},
//	                                                           MailFromAttributes; unknown 404 NotFoundException
//	               PUT  /v2/email/identities/{name}/mail-from  {MailFromDomain (a subdomain of name), BehaviorOnMxFailure}
//	mailx_email    POST /domains, GET /domains                 Bearer key; {name, region?, custom_return_path?} -> domain
//	               GET /domains/{id}, POST /domains/{id}/verify  with records (SPF MX and TXT at send or the return path,
//	                                                           DKIM TXT at resend._domainkey); status not_started, pending
//	                                                           once verify was called, verified; a second one 422
//	                                                           validation_error "... has already been registered."
//	mailz_email    POST /domains, GET /domains?count&offset    X-Postmark-Account-Token (else 401 ErrorCode 10); {Name,
//	               GET /domains/{id}, PUT .../verifyDkim,      ReturnPathDomain?} -> domain details (DKIMPendingHost/Value
//	               PUT .../verifyReturnPath                    until verified, then DKIMHost/Value; ReturnPathDomainCNAMEValue
//	                                                           pm.mtasv.net); unknown 422 ErrorCode 510
//	               POST /senders, GET /senders, GET /senders/{id}  {FromEmail, Name} -> sender signature {ID, EmailAddress,
//	                                                           Confirmed}; a second one 422 ErrorCode 504; unknown 501
//
// Resend and Postmark share /domains: a request with a Postmark token
// header is Postmark's, any other Resend's.
//
// The Aligo SMS host labels its JSON text/html and answers the success code
// as the string "1" but error codes as numbers, as PROVIDERS.md warns the
// real host does. Discord answers carry X-RateLimit-* headers.
//
// # Recorded messages
//
// Message.Call numbers the accepted vendor call that carried the message
// (shared by the messages of one batch call), so tests can count calls.
// Message.ID is the id the vendor answered for the message: Aligo msg_id
// and AlimTalk mid (shared by the recipients of one request), Solapi
// messageId, FCM name (projects/{p}/messages/{id}), Resend id, SES
// MessageId, Postmark MessageID, Slack "channelId:ts", Discord snowflake,
// and "sim-N" for Slack webhooks (which answer no id). To is the phone
// number, bare e-mail address, device token (or topic or condition), Slack
// channel as sent, Discord channel id, or for webhooks the URL path.
// Headers holds:
//
//	vendora_sms    sender, msg_type, testmode_yn, rdate, rtime
//	vendora_msgr   senderkey, tpl_code, sender, recvname, button, failover, testMode, senddate
//	vendorb_*      from, type, country, customFields.<k>, pfId, templateId, disableSms, variables.<#{k}>
//	push_gateway   the data map
//	mailx_email    the headers object, plus From
//	maily_email    From (display name decoded), Cc, Reply-To, X-SES-CONFIGURATION-SET, Simple.Headers
//	               (Raw: the message's headers; Template: X-SES-TEMPLATE)
//	mailz_email    the Headers array, plus From, Cc, Reply-To, X-PM-Message-Stream, X-PM-Tag, X-PM-Metadata-<k>
//	chata_*        blocks (raw JSON), username, icon_emoji, icon_url, channel, thread_ts; bot: channel_id
//	chatb_*        username, avatar_url, embeds (raw JSON)
//
// At most 200,000 messages are kept; the oldest are dropped.
//
// # Control API
//
//	GET    /_sim/messages?kind=&to=&limit=  {"messages":[...]} oldest first, newest last; limit keeps the newest
//	DELETE /_sim/messages                   204
//	POST   /_sim/faults                     {kind, op?, status?, vendorCode?, message?, count?, latencyMs?} -> 201 {"fault"}
//	GET    /_sim/faults                     {"faults":[...]} what is still queued
//	DELETE /_sim/faults[?kind=]             204
//	PUT    /_sim/balance                    {kind, value, lms?, mms?, point?} -> 200 the balances
//	GET    /_sim/balance                    {"vendora":{SMS_CNT,LMS_CNT,MMS_CNT},"vendorb":{balance,point}}
//	POST   /_sim/reset                      204; messages, faults and balances back to the start
//	GET    /_sim/identities?kind=           {"identities":[...]} the e-mail vendors' sending identities
//	POST   /_sim/identities                 {kind, name, verified?} -> 201: one made as the vendor's console would
//	                                        (an address when name has @, else a domain); 409 when it exists
//	POST   /_sim/identities/verify          {kind, name} -> 200: verified (DKIM, MAIL FROM, return path, link
//	                                        clicked), standing for the vendor seeing the DNS records; 404 unknown
//	POST   /_sim/reports                    {kind, to?, outcome: delivered|undelivered, code?, text?, delayMs?, count?}
//	                                        -> 201: the delivery reports of the next count messages (reports.go)
//	GET    /_sim/reports?kind=&to=          {"reports":[...]} each message's report, with the lookups that listed it
//	DELETE /_sim/reports                    204
//
// Delivery reports (issue 35): every SMS and AlimTalk message gets one,
// delivered DefaultReportDelay (500 ms) after the send unless a rule says
// otherwise, served by the vendors' result APIs: Aligo POST /sms_list/ and
// POST /akv10/history/detail/, Solapi GET /messages/v4/list?messageId=
// (reports.go has their formats).
//
// A fault applies to the next count (default 1) calls of its kind that get
// past the authentication check and parse; faults of one kind and op queue
// up in order. op is send (default), balance (/remain/, heartinfo,
// /cash/v1/balance; the sibling kind of the same vendor is tried too, as both
// kinds share one account) or token (AlimTalk token, FCM /token). latencyMs
// sleeps first; with neither status nor vendorCode the call then proceeds
// normally. message overrides the vendor's error text (for example SES
// ThrottlingException "Daily message quota exceeded."). Every 429 carries
// Retry-After: 1.
//
// Balances belong to the vendor, not the kind: PUT with either vendorA kind
// sets SMS_CNT=value and LMS_CNT, MMS_CNT to lms, mms (default 0); either
// vendorB kind sets balance (KRW, and point if given). Defaults: vendorA SMS
// 1000, LMS 500, MMS 200; vendorB balance 100000. Sends never consume them:
// insufficient balance is simulated with a fault.
//
// # Faults per vendor
//
//	kind           vendorCode (string or number)          answer                                status only
//	vendora_sms    integer, e.g. -201, -101, -301, -105   HTTP 200 {"result_code":N,"message"}  HTML error page with that status
//	vendora_msgr   integer, e.g. -10, -107, -201, 509     HTTP 200 {"code":N,"message"}         HTML error page with that status
//	vendorb_*      4 digits, e.g. 1030, 2230, 1062, 1060  every message of the call gets that    403 InvalidAPIKey, 400 ValidationError,
//	                                                      statusCode (HTTP 200; /send answers    429 TooManyRequests, 500 InternalError,
//	                                                      it, detail lists failedMessageList)    502/503/504 non-JSON page
//	               word, e.g. InvalidAPIKey               {"errorCode","errorMessage"}, 403 for the four auth codes, else 400
//	push_gateway   UNREGISTERED 404, INVALID_ARGUMENT 400, SENDER_ID_MISMATCH 403, QUOTA_EXCEEDED 429 (+QuotaFailure),
//	               UNAVAILABLE 503, INTERNAL 500, THIRD_PARTY_AUTH_ERROR 401, UNAUTHENTICATED 401 (no FcmError detail);
//	               Google RPC envelope. Status only picks the code of that status. op token: OAuth error
//	               {"error":vendorCode or invalid_grant(400)/invalid_client(401)/rate_limit_exceeded(429)/internal_failure}
//	mailx_email    rate_limit_exceeded, daily_quota_exceeded, monthly_quota_exceeded 429; missing_api_key,
//	               restricted_api_key 401; invalid_api_key 403; validation_error, invalid_from_address,
//	               missing_required_field 422; invalid_idempotent_request, concurrent_idempotent_requests 409;
//	               application_error, internal_server_error 500. {"statusCode","name","message"}; status only
//	               picks 400/422 validation_error, 401 missing_api_key, 403 invalid_api_key, 429
//	               rate_limit_exceeded, 5xx application_error. Batch faults fail the whole call.
//	maily_email    MessageRejected, BadRequestException, ThrottlingException, LimitExceededException,
//	               SendingPausedException, AccountSuspendedException, MailFromDomainNotVerifiedException 400;
//	               TooManyRequestsException 429; NotFoundException 404; UnrecognizedClientException,
//	               InvalidSignatureException, AccessDeniedException, ExpiredTokenException 403; InternalFailure
//	               500; ServiceUnavailable 503. X-Amzn-ErrorType header, {"message"}.
//	mailz_email    10 -> 401; 429 -> 429; 300, 402, 405, 406, ... -> 422 {"ErrorCode","Message"}. In a batch,
//	               300 and 406 (without status) fail every email in its slot with HTTP 200. Status only: 401/403
//	               -> 10, 429 -> 429, 5xx -> HTML error page, others -> 300.
//	chata_webhook  invalid_payload, no_text, invalid_blocks, user_not_found 400; action_prohibited,
//	               invalid_token 403; channel_not_found, no_service 404; channel_is_archived 410;
//	               rate_limited 429; rollup_error 500 (plain-text body)
//	chata_bot      any error, e.g. channel_not_found, invalid_auth -> HTTP 200 {"ok":false,"error"};
//	               ratelimited -> 429. Status only: 429 ratelimited, 401/403 invalid_auth, 5xx internal_error.
//	chatb_*        10015 404, 10003 404, 50027 401, 0 401, 50001 403, 50013 403, 50006 400, 50035 400 as
//	               {"code","message"}; status 429 -> {"message","retry_after":1.0,"global":false};
//	               status only: 401 -> 50027 (webhook) / 0 (bot), 403 -> 50013, 404 -> 10015 / 10003, 5xx.
//
// # Callbacks (bounces and complaints)
//
// The simulator posts the e-mail vendors' delivery-feedback callbacks to a
// URL of the service, in each vendor's format:
//
//	POST   /_sim/callbacks       {kind, url, type, to?, messageId?, bounceType?, secret?, signatureVersion?, certBase?}
//	                             -> 200 {status, body, messageId, payload, headers}: what the service answered and what was posted
//	PUT    /_sim/callbacks/auto  {kind, url, secret?, signatureVersion?}: automatic callbacks (below); DELETE clears them
//	GET    /_sim/sns/SimpleNotificationService-simulator.pem   the SNS signing certificate (self-signed RSA 2048)
//	GET    /_sim/sns/confirm?Action=ConfirmSubscription&TopicArn=&Token=   an SNS SubscribeURL; records the confirmation
//	GET    /_sim/sns/subscriptions                             {"subscriptions":[{topicArn, token, confirmedAt}]}
//
// type is bounce, complaint, delivery (issue 35: SES Delivery, Resend
// email.delivered, Postmark RecordType Delivery) or (maily_email only)
// subscription; bounceType
// permanent (default) or transient. messageId defaults to the id of the
// newest recorded message of kind to to.
//
//	maily_email  an Amazon SNS HTTP delivery (Content-Type text/plain, x-amz-sns-* headers) signed
//	             SignatureVersion 1 (SHA1withRSA, default) or 2 (SHA256withRSA) over AWS's canonical
//	             string; SigningCertURL and SubscribeURL point at this simulator (certBase overrides the
//	             scheme://host). Notification Message: SES notification JSON, notificationType Bounce
//	             (Permanent/General 5.1.1 or Transient/MailboxFull 4.2.2) or Complaint (abuse).
//	mailx_email  Resend webhook email.bounced (data.bounce.type Permanent or Transient) or
//	             email.complained, Svix-signed with secret (whsec_..., required): svix-id,
//	             svix-timestamp, svix-signature "v1,<base64 HMAC-SHA256(id.timestamp.body)>".
//	mailz_email  Postmark webhook: RecordType Bounce with Type HardBounce (TypeCode 1) or SoftBounce
//	             (4096), or RecordType SpamComplaint (512); secret, when given, is sent as the
//	             basic-auth password (user "postmark").
//
// Automatic callbacks: once a kind has a target (PUT /_sim/callbacks/auto),
// a message of that kind accepted for SES's mailbox-simulator addresses
// bounce@simulator.amazonses.com or complaint@simulator.amazonses.com is
// reported 300 ms later as a permanent bounce or a complaint, as SES's
// mailbox simulator does; one for success@simulator.amazonses.com is
// reported delivered before the send is answered (a callback that
// outruns the vendor's answer: issue 35's early reports).
//
// POST /_sim/reset also forgets confirmed subscriptions, automatic
// targets and sending identities; the signing key stays, so certificates already fetched keep
// verifying.
//
// The codes marked UNCONFIRMED in PROVIDERS.md are used as written there.
// -99 (Aligo malformed request) is the simulator's own.
package simulator
