"""schemathesis hooks (SCHEMATHESIS_HOOKS, set by run.py): a file of each media type a document may be declared as.

JSON Schema cannot say "a PDF": /openapi.json lists the media types each upload's file part may declare (OpenAPI's
`encoding`), and the service sniffs the bytes. Registered here, schemathesis sends a file that is what its part declares
(the form's file part and the raw-bytes bodies alike), so a declared upload reaches the handler instead of meeting 415.
"""
from hypothesis import strategies as st

import schemathesis

# The smallest files the service's sniffer recognises.
SAMPLES = {
    'application/pdf': b'%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n',
    'image/jpeg': b'\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9',
    'image/png': b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU',
    'image/heic': b'\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic',
    # A customer's ransom conversation may also be text or a saved e-mail.
    'text/plain': 'Pay 500 USDT and the phone is yours again.\n'.encode(),
    'message/rfc822': b'From: "Unlock" <unlock@example.invalid>\r\nSubject: pay\r\nDate: Mon, 30 Nov 2026 09:12:00 +0800\r\n\r\nPay.\r\n',
}

# A body that declares nothing (application/octet-stream) must still be one of the document formats.
DOCUMENTS = [SAMPLES[t] for t in ('application/pdf', 'image/jpeg', 'image/png', 'image/heic')]
schemathesis.openapi.media_type('application/octet-stream', st.sampled_from(DOCUMENTS))

for media_type, sample in SAMPLES.items():
    # Arbitrary bytes after a binary format's signature; text stays text (other bytes would not be UTF-8).
    tail = st.just(b'') if media_type in ('text/plain', 'message/rfc822') else st.binary(max_size=32)
    schemathesis.openapi.media_type(media_type, tail.map(lambda rest, head=sample: head + rest))
