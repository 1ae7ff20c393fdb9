#!/usr/bin/env python3
"""Writes the .eml fixtures of InboundMailTests: replies as real mail clients write them.

Run it from anywhere (python3 Tests/InboundMailTests/Fixtures/make_fixtures.py); it rewrites the .eml files next to
itself, byte for byte the same each time (fixed dates, ids and boundaries). Python's standard library only.

Each message copies what the named client really sends (header names and order, boundaries, encodings,
threading headers), taken from mail those clients wrote; the words are made up. The replies answer mail from
Reclaim (`cases@reclaim.example`, Message-IDs `<…@reclaim.example>`, reply address `cases+<token>@…`).
"""

import base64
import os
import struct
import zlib
from email import charset as email_charset
from email import policy
from email.generator import BytesGenerator
from email.mime.application import MIMEApplication
from email.mime.base import MIMEBase
from email.mime.image import MIMEImage
from email.mime.message import MIMEMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from io import BytesIO

HERE = os.path.dirname(os.path.abspath(__file__))
CRLF = policy.compat32.clone(linesep="\r\n")


def damm(digits):
    table = [[0, 3, 1, 7, 5, 9, 8, 6, 4, 2], [7, 0, 9, 2, 1, 5, 4, 8, 6, 3], [4, 2, 0, 6, 8, 7, 1, 3, 5, 9],
             [1, 7, 5, 0, 9, 8, 3, 4, 2, 6], [6, 1, 2, 3, 0, 4, 5, 9, 7, 8], [3, 6, 7, 4, 2, 0, 9, 5, 8, 1],
             [5, 8, 6, 9, 7, 2, 0, 1, 3, 4], [8, 9, 4, 5, 3, 6, 2, 0, 1, 7], [9, 4, 3, 8, 6, 1, 7, 2, 0, 5],
             [2, 5, 8, 1, 4, 3, 6, 7, 9, 0]]
    interim = 0
    for digit in digits:
        interim = table[interim][int(digit)]
    return digits + str(interim)


CASE = damm("48271930561")          # a case number with a valid check digit
CASE_ZH = damm("73015526489")
TOKEN_ADDRESS = "cases+k7q2m9xw4t@reclaim.example"
SENT_ID = "<0b6c2e4a-61f1-4c4e-9d0f-5a8e2f1c7d93@reclaim.example>"
SENT_ID_2 = "<5e1f9b20-7c3d-4a8e-b1f6-2d9c0e4a8b17@reclaim.example>"


def word(text, charset, encoding="B"):
    """One RFC 2047 encoded word, as the client writes it (charset spelled its way)."""
    data = text.encode(charset.lower().replace("gbk", "gb18030"))
    if encoding == "B":
        return "=?%s?B?%s?=" % (charset, base64.b64encode(data).decode())
    quoted = "".join(chr(b) if (chr(b).isalnum() and b < 128) else ("_" if b == 32 else "=%02X" % b) for b in data)
    return "=?%s?Q?%s?=" % (charset, quoted)


def png(width=4, height=4, rgb=(200, 40, 40)):
    """A real PNG (the "invoice photo"), from zlib and struct alone."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


# A 1x1 baseline JPEG (SOI … EOI), the smallest well-formed one.
JPEG = bytes.fromhex(
    "FFD8FFDB004300030202020202030202020303030304060404040404080606050609080A0A090809090A0C0F0C0A0B0E0B09090D110D0E0F"
    "101011100A0C12131210130F101010FFC9000B080001000101011100FFCC000600101005FFDA0008010100003F00D2CF20FFD9")
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj "
       b"3 0 obj<</Type/Page/MediaBox[0 0 200 200]/Parent 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def write(name, message, transform=None):
    out = BytesIO()
    BytesGenerator(out, mangle_from_=False, policy=CRLF).flatten(message)
    data = out.getvalue()
    if transform:
        data = transform(data)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    return data


def headers(message, pairs):
    for name, value in pairs:
        message[name] = value


def text_part(text, charset, cte):
    """A text part with the given charset and transfer encoding (as the client chose them)."""
    cs = email_charset.Charset(charset)
    cs.body_encoding = {"qp": email_charset.QP, "base64": email_charset.BASE64, "8bit": None, "7bit": None}[cte]
    subtype = "html" if text.lstrip().startswith("<") else "plain"
    part = MIMEText(text, subtype, cs)
    del part["MIME-Version"]
    if cte in ("8bit", "7bit"):
        del part["Content-Transfer-Encoding"]
        part["Content-Transfer-Encoding"] = cte
    return part


# 1. Gmail (web): multipart/alternative, QP UTF-8, In-Reply-To and References, Delivered-To first.
def gmail():
    m = MIMEMultipart("alternative", boundary="000000000000b7e43c0619a8f2d1")
    del m["MIME-Version"]
    plain = ("Hello,\n\nThank you for calling me back this morning. The thief changed the recovery phone as well, "
             "I only noticed it now.\nI still have the original box with the serial number on it.\n\nAda\n\n"
             "On Tue, 1 Dec 2026 at 09:12, Reclaim <cases@reclaim.example> wrote:\n"
             "> Hello,\n> We have opened case %s to recover your account.\n" % CASE)
    html = ('<div dir="ltr">Hello,<div><br></div><div>Thank you for calling me back this morning. The thief changed the '
            'recovery phone as well, I only noticed it now.</div><div>I still have the original box with the serial '
            'number on it.</div><div><br></div><div>Ada</div></div><br><div class="gmail_quote"><div dir="ltr" '
            'class="gmail_attr">On Tue, 1 Dec 2026 at 09:12, Reclaim &lt;<a href="mailto:cases@reclaim.example">'
            'cases@reclaim.example</a>&gt; wrote:<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px '
            '0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">Hello,<br>We have opened case %s to '
            'recover your account.<br></blockquote></div>\n' % CASE)
    m.attach(text_part(plain, "UTF-8", "qp"))
    m.attach(text_part(html, "UTF-8", "qp"))
    for part in m.get_payload():
        part.replace_header("Content-Type", part["Content-Type"].replace('charset="utf-8"', 'charset="UTF-8"'))
    pairs = [("Delivered-To", TOKEN_ADDRESS), ("Received", "by 2002:a05:6a10:8e08:b0:5a1:7c3e:d02f with SMTP id o8csp412345pxr;\r\n"
             "        Tue, 1 Dec 2026 02:04:07 -0800 (PST)"),
             ("MIME-Version", "1.0"), ("References", SENT_ID), ("In-Reply-To", SENT_ID),
             ("From", "Ada Lovelace <ada.lovelace@gmail.com>"), ("Date", "Tue, 1 Dec 2026 11:04:05 +0100"),
             ("Message-ID", "<CAF=k3Yx7Rq2vA+9Lw0pDx4hN_Jm1sTq8eZ2bUo5cWf3gH6iK@mail.gmail.com>"),
             ("Subject", "Re: Case %s: a new message for you" % CASE), ("To", "Reclaim <%s>" % TOKEN_ADDRESS)]
    for name, value in reversed(pairs):
        m._headers.insert(0, (name, value))
    return write("gmail-reply.eml", m)


# 2. Outlook (desktop): References only (no In-Reply-To), Thread-Index, Windows-1252 QP, a Latin-1 display name,
#    a CC'd person, and a PDF whose RFC 2047 name sits inside quotes.
def outlook():
    outer = MIMEMultipart("mixed", boundary="_004_AM6PR04MB5589E1F3A2B0C4D8E7F6A5B4AM6PR04MB5589eurp_")
    alternative = MIMEMultipart("alternative", boundary="_000_AM6PR04MB5589E1F3A2B0C4D8E7F6A5B4AM6PR04MB5589eurp_")
    del alternative["MIME-Version"]
    plain = ("Hallo,\n\nanbei die Rechnung f\u00fcr das Telefon \u2013 \u201eGekauft im M\u00e4rz\u201c. "
             "Ich hoffe, das hilft.\n\nMit freundlichen Gr\u00fc\u00dfen\nJ\u00f6rg M\u00fcller\n\n"
             "-----Urspr\u00fcngliche Nachricht-----\nVon: Reclaim <cases@reclaim.example>\n"
             "Betreff: Case %s: we need documents from you\n" % CASE)
    html = ("<html xmlns:o=\"urn:schemas-microsoft-com:office:office\"><head><meta http-equiv=\"Content-Type\" "
            "content=\"text/html; charset=Windows-1252\"><style><!-- p.MsoNormal {margin:0cm; font-size:11.0pt;} --></style>"
            "</head><body lang=\"DE\"><div class=\"WordSection1\"><p class=\"MsoNormal\">Hallo,<o:p></o:p></p>"
            "<p class=\"MsoNormal\">anbei die Rechnung f\u00fcr das Telefon \u2013 \u201eGekauft im M\u00e4rz\u201c.</p>"
            "</div></body></html>\n")
    alternative.attach(text_part(plain, "Windows-1252", "qp"))
    alternative.attach(text_part(html, "Windows-1252", "qp"))
    for part in alternative.get_payload():
        part.replace_header("Content-Type", part["Content-Type"].replace('charset="windows-1252"', 'charset="Windows-1252"'))
    outer.attach(alternative)
    pdf = MIMEApplication(PDF, "pdf")
    del pdf["MIME-Version"]
    del pdf["Content-Type"]
    del pdf["Content-Disposition"]
    name = word("Rechnung M\u00e4rz.pdf", "iso-8859-1", "Q")
    pdf["Content-Type"] = 'application/pdf; name="%s"' % name
    pdf["Content-Description"] = name
    pdf["Content-Disposition"] = 'attachment; filename="%s"; size=%d;\r\n\tcreation-date="Tue, 01 Dec 2026 10:20:11 GMT"' % (name, len(PDF))
    outer.attach(pdf)
    pairs = [("From", "=?iso-8859-1?Q?M=FCller=2C_J=F6rg?= <joerg.mueller@contoso.de>"),
             ("To", '"Reclaim" <%s>' % TOKEN_ADDRESS), ("CC", "Anna Schmidt <anna.schmidt@contoso.de>"),
             ("Subject", "AW: Case %s: we need documents from you" % CASE),
             ("Thread-Topic", "Case %s: we need documents from you" % CASE),
             ("Thread-Index", "AQHa9Yk3xWq8bZ2kS0eJb3y7h0X1+7K2cQ=="), ("Date", "Tue, 1 Dec 2026 10:20:11 +0000"),
             ("Message-ID", "<AM6PR04MB5589E1F3A2B0C4D8E7F6A5B4@AM6PR04MB5589.eurprd04.prod.outlook.com>"),
             ("References", SENT_ID_2), ("Accept-Language", "de-DE, en-US"), ("Content-Language", "de-DE"),
             ("X-MS-Has-Attach", "yes"), ("X-MS-TNEF-Correlator", "")]
    del outer["MIME-Version"]
    for name, value in reversed(pairs):
        outer._headers.insert(0, (name, value))
    outer["MIME-Version"] = "1.0"
    return write("outlook-reply.eml", outer)


# 3. Apple Mail (iPhone): alternative[plain, related[html, inline JPEG]]; the subject in Q words split inside a
#    character, as Apple Mail splits them.
def apple():
    outer = MIMEMultipart("alternative", boundary="Apple-Mail-8C1E4F2A-9B3D-4E7F-A6C5-2D1B0F9E8A7C")
    del outer["MIME-Version"]
    plain = ("Here is the photo of the receipt \U0001F4F7\n\nThe phone was bought at the shop on the high street.\n\n"
             "Sent from my iPhone\n\n> On 1 Dec 2026, at 09:12, Reclaim <cases@reclaim.example> wrote:\n>\n"
             "> We need documents from you.\n")
    outer.attach(text_part(plain, "utf-8", "qp"))
    related = MIMEMultipart("related", boundary="Apple-Mail-3F7A9C1E-5D2B-4B8A-9E6F-1C0D2A3B4E5F", type="text/html")
    del related["MIME-Version"]
    html = ('<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head><body dir="auto">'
            '<div dir="ltr">Here is the photo of the receipt \U0001F4F7</div><div dir="ltr"><img src="cid:B3E1C7A2-4F9D-4C1B-8A6E-2F0D9C8B7A61" '
            'alt="IMG_0421.jpeg"><br><br>The phone was bought at the shop on the high street.<br><br>'
            '<div>Sent from my iPhone</div></div></body></html>')
    related.attach(text_part(html, "utf-8", "qp"))
    image = MIMEImage(JPEG, "jpeg")
    del image["Content-Type"]
    del image["MIME-Version"]
    image["Content-Type"] = 'image/jpeg; name="IMG_0421.jpeg"; x-unix-mode=0644'
    image["Content-Disposition"] = 'inline; filename="IMG_0421.jpeg"'
    image["Content-Id"] = "<B3E1C7A2-4F9D-4C1B-8A6E-2F0D9C8B7A61>"
    related.attach(image)
    outer.attach(related)
    subject = ("=?utf-8?Q?Re=3A_Case_%s=3A_we_need_documents_from_you_=E2=80?=\r\n =?utf-8?Q?=94_receipt_=F0=9F=93?=\r\n"
               " =?utf-8?Q?=B7?=" % CASE)
    pairs = [("Content-Type", None), ("Content-Transfer-Encoding", "7bit"), ("From", "Grace Hopper <grace.hopper@icloud.com>"),
             ("Mime-Version", "1.0 (1.0)"), ("Subject", subject), ("Date", "Tue, 1 Dec 2026 09:31:47 -0500"),
             ("Message-Id", "<6A1D5B7E-2C4F-4E9A-B3D8-0F1E2A3B4C5D@icloud.com>"), ("References", SENT_ID_2),
             ("In-Reply-To", SENT_ID_2), ("To", TOKEN_ADDRESS), ("X-Mailer", "iPhone Mail (21G93)")]
    content_type = outer["Content-Type"]
    del outer["Content-Type"]
    for name, value in reversed(pairs):
        outer._headers.insert(0, (name, value if value is not None else content_type))
    return write("apple-mail-inline-image.eml", outer)


# 4. Foxmail (Windows, Chinese): GB18030 everywhere, base64 bodies, an attachment named in GB18030 words in
#    Content-Type and in RFC 2231 GBK continuations in Content-Disposition; a 4-byte GB18030 character (𠮷).
def foxmail():
    outer = MIMEMultipart("mixed", boundary="----=_001_NextPart425161738120_=----")
    del outer["MIME-Version"]
    alternative = MIMEMultipart("alternative", boundary="----=_002_NextPart514378221904_=----")
    del alternative["MIME-Version"]
    plain = ("您好：\n\n我是案件 %s 的当事人吉田（𠮷田）。附件是购买手机的发票扫描件，请查收。\n"
             "小偷昨天还给我发了短信，要求我付钱。\n\n谢谢！\n\n\n王小明\n" % CASE_ZH)
    html = ("<html><head><meta http-equiv=\"content-type\" content=\"text/html; charset=GB18030\"><style>body { line-height: 1.5; }"
            "</style></head><body>\n<div><span></span>您好：</div><div><br></div><div>我是案件 %s 的当事人吉田（𠮷田）。"
            "附件是购买手机的发票扫描件，请查收。</div><div>小偷昨天还给我发了短信，要求我付钱。</div><div><br></div>"
            "<div>谢谢！</div><hr style=\"width: 210px; height: 1px;\" color=\"#b5c4df\" size=\"1\" align=\"left\">"
            "<div><span>王小明</span></div>\n</body></html>" % CASE_ZH)
    for text in (plain, html):
        part = text_part(text, "gb18030", "base64")
        part.replace_header("Content-Type", part["Content-Type"].replace('charset="gb18030"', 'charset="GB18030"'))
        alternative.attach(part)
    outer.attach(alternative)
    pdf = MIMEBase("application", "octet-stream")
    pdf.set_payload(PDF)
    from email import encoders
    encoders.encode_base64(pdf)
    del pdf["Content-Type"]
    del pdf["MIME-Version"]
    name = "购机发票扫描件.pdf"
    gbk = name.encode("gbk")
    pieces = ["".join("%%%02X" % b for b in gbk[:8]), "".join("%%%02X" % b if b >= 128 else chr(b) for b in gbk[8:])]
    pdf["Content-Type"] = 'application/octet-stream;\r\n\tname="%s"' % word(name, "GB18030")
    del pdf["Content-Transfer-Encoding"]
    pdf["Content-Transfer-Encoding"] = "base64"
    pdf["Content-Disposition"] = "attachment;\r\n\tfilename*0*=GBK''%s;\r\n\tfilename*1*=%s" % (pieces[0], pieces[1])
    outer.attach(pdf)
    pairs = [("Date", "Wed, 2 Dec 2026 10:15:32 +0800"), ("From", '"%s" <wang.xiaoming@qq.com>' % word("王小明", "GB18030")),
             ("To", '"cases+r4n8t2kp6w" <cases+r4n8t2kp6w@reclaim.example>'),
             ("Subject", "%s %s" % (word("回复: 案件 %s：我们需要您提供文件" % CASE_ZH, "GB18030"), "")),
             ("References", "<a7d3f0e2-9b1c-4d5e-8f6a-3c2b1a0e9d8f@reclaim.example>"),
             ("In-Reply-To", "<a7d3f0e2-9b1c-4d5e-8f6a-3c2b1a0e9d8f@reclaim.example>"),
             ("X-Priority", "3"), ("X-GUID", "5E0C7D2B-1A9F-4E3C-8B6D-2F1E0A9C8B7D"), ("X-Has-Attach", "yes"),
             ("X-Mailer", "Foxmail 7.2.25.375[cn]"), ("Mime-Version", "1.0"),
             ("Message-ID", "<202612021015320951127@qq.com>")]
    for name, value in reversed(pairs):
        outer._headers.insert(0, (name, value.rstrip()))
    return write("foxmail-gb18030.eml", outer)


# 5. Big5 (Taiwan, an older Outlook Express-style client): a raw 8-bit Big5 body, a Big5 B-word subject and a
#    Q-word display name.
def big5():
    body_text = "您好：\n\n我的帳號被盜了，小偷把救援信箱改成他的。我已經準備好購買證明，\n請告訴我下一步該怎麼做。\n\n陳美玲 敬上\n"
    m = MIMEText("@@BODY@@", "plain", "us-ascii")
    del m["Content-Type"]
    del m["Content-Transfer-Encoding"]
    del m["MIME-Version"]
    pairs = [("From", '"%s" <meiling.chen@yahoo.com.tw>' % word("陳美玲", "big5", "Q")),
             ("To", "<%s>" % "cases+m3v7c1qz8d@reclaim.example"),
             ("Subject", word("回覆: 案件 %s 已受理" % CASE_ZH, "big5")), ("Date", "Wed, 2 Dec 2026 14:02:19 +0800"),
             ("Message-ID", "<001a01db2f3c$7e9b2c40$7bd18e40$@yahoo.com.tw>"), ("MIME-Version", "1.0"),
             ("Content-Type", 'text/plain;\r\n\tcharset="big5"'), ("Content-Transfer-Encoding", "8bit"),
             ("X-Mailer", "Microsoft Outlook 16.0"), ("Thread-Index", "AdsvPH6bLEB7hI5AQ8mW1xZ3kT2bNQ=="),
             ("Content-Language", "zh-tw")]
    for name, value in pairs:
        m[name] = value
    raw = body_text.replace("\n", "\r\n").encode("big5")
    return write("big5-reply.eml", m, lambda data: data.replace(b"@@BODY@@", raw))


# 6. HTML only (a web mail's mobile composer): no text/plain alternative at all; style, script, entities, lists.
def html_only():
    html = ("<!DOCTYPE html><html><head><title>Re: your case</title><style>p{margin:0}</style>"
            "<script>document.write('tracking')</script></head><body>"
            "<p>Hello&nbsp;team,</p><p>The thief wrote to me again &ndash; here&#8217;s what I know:</p>"
            "<ul><li>Serial: C02XK1ZJH3QD</li><li>Bought at Caf&eacute; &amp; Phones, 3&nbsp;May</li><li>Price &euro;&#x20AC;899</li></ul>"
            "<table><tr><td>IMEI</td><td>356938035643809</td></tr></table>"
            "<div>Regards,<br>Ren&eacute;e<br><!-- signature --></div><img src=\"https://tracker.example/p.gif\" width=\"1\"></body></html>")
    m = text_part(html, "utf-8", "qp")
    del m["MIME-Version"]
    content_type, cte = m["Content-Type"], m["Content-Transfer-Encoding"]
    del m["Content-Type"]
    del m["Content-Transfer-Encoding"]
    pairs = [("Return-Path", "<renee@example.org>"), ("X-Original-To", TOKEN_ADDRESS), ("Delivered-To", "cases@reclaim.example"),
             ("From", '"@@NAME@@" <renee@example.org>'),
             ("To", "cases@reclaim.example"), ("Subject", "Re: your case"), ("Date", "2 Dec 2026 16:45 +0000"),
             ("Message-ID", "<m.8f2a1c@mail.example.org>"), ("In-Reply-To", "<unknown@elsewhere.example>"),
             ("MIME-Version", "1.0"), ("Content-Type", content_type), ("Content-Transfer-Encoding", cte)]
    for name, value in pairs:
        m[name] = value
    # The display name is raw UTF-8 (RFC 6532), as some web mails send it.
    return write("html-only.eml", m, lambda data: data.replace(b"@@NAME@@", "Ren\u00e9e".encode("utf-8")))


# 7. An out-of-office answer (RFC 3834): Auto-Submitted: auto-replied.
def auto_reply():
    m = text_part("I am out of the office until 7 December with limited access to e-mail.\n", "us-ascii", "7bit")
    del m["MIME-Version"]
    content_type = m["Content-Type"]
    del m["Content-Type"]
    del m["Content-Transfer-Encoding"]
    pairs = [("From", "Ada Lovelace <ada.lovelace@example.com>"), ("To", TOKEN_ADDRESS),
             ("Subject", "Automatic reply: Case %s: a new message for you" % CASE), ("Date", "Tue, 01 Dec 2026 09:12:30 +0000"),
             ("Message-ID", "<oof-4d2c8e1b@example.com>"), ("In-Reply-To", SENT_ID), ("References", SENT_ID),
             ("Auto-Submitted", "auto-replied"), ("X-Auto-Response-Suppress", "All"), ("X-Autoreply", "yes"),
             ("MIME-Version", "1.0"), ("Content-Type", content_type), ("Content-Transfer-Encoding", "7bit")]
    for name, value in pairs:
        m[name] = value
    return write("auto-reply.eml", m)


# 8. Thunderbird "Forward as attachment": format=flowed text, the thief's mail as message/rfc822 (itself an
#    alternative plus a screenshot), and a photo named in RFC 2231 UTF-8 (filename*=).
def forwarded():
    inner = MIMEMultipart("mixed", boundary="inner-mixed-7f3a")
    del inner["MIME-Version"]
    inner_alt = MIMEMultipart("alternative", boundary="inner-alt-2b9c")
    del inner_alt["MIME-Version"]
    inner_alt.attach(text_part("Pay 500 USDT to the wallet below within 24 hours or your photos go public.\n"
                               "Wallet: TQ7x9kR2mN4pL8vB3cZ6fH1jD5sW0yA\n", "utf-8", "qp"))
    inner_alt.attach(text_part("<p>Pay 500 USDT to the wallet below within 24 hours or your photos go public.</p>"
                               "<p>Wallet: TQ7x9kR2mN4pL8vB3cZ6fH1jD5sW0yA</p>", "utf-8", "qp"))
    inner.attach(inner_alt)
    shot = MIMEImage(png(), "png")
    del shot["MIME-Version"]
    shot.add_header("Content-Disposition", "attachment", filename="screenshot.png")
    inner.attach(shot)
    for name, value in reversed([("From", "Account Support <support@acc0unts-security.example>"),
                                 ("To", "ada.lovelace@example.com"), ("Subject", "Your account is locked"),
                                 ("Date", "Mon, 30 Nov 2026 23:58:01 +0300"), ("Message-ID", "<thief-01@acc0unts-security.example>"),
                                 ("MIME-Version", "1.0")]):
        inner._headers.insert(0, (name, value))

    outer = MIMEMultipart("mixed", boundary="------------8sR2vXq0Lk3mN5pT7wY9zB1c")
    del outer["MIME-Version"]
    flowed = MIMEText("This is the mail the thief sent me last night. I did not pay. I am forwarding it as you \n"
                      "asked on the phone.\n\n-- \nAda\n", "plain", "utf-8")
    flowed.replace_header("Content-Type", "text/plain; charset=UTF-8; format=flowed")
    del flowed["Content-Transfer-Encoding"]
    flowed["Content-Transfer-Encoding"] = "7bit"
    flowed.set_payload("This is the mail the thief sent me last night. I did not pay. I am forwarding it as you \r\n"
                       "asked on the phone.\r\n\r\n-- \r\nAda\r\n")
    del flowed["MIME-Version"]
    outer.attach(flowed)
    attached = MIMEMessage(inner)
    del attached["MIME-Version"]
    attached.replace_header("Content-Type", 'message/rfc822; charset=UTF-8; name="Your account is locked.eml"')
    attached["Content-Disposition"] = 'attachment; filename="Your account is locked.eml"'
    outer.attach(attached)
    photo = MIMEImage(JPEG, "jpeg")
    del photo["MIME-Version"]
    del photo["Content-Type"]
    photo["Content-Type"] = "image/jpeg"
    photo["Content-Disposition"] = "attachment; filename*=UTF-8''Quittung%20f%C3%BCr%20das%20Telefon.jpg"
    outer.attach(photo)
    for name, value in reversed([("Message-ID", "<2f6c1e9a-3b7d-4a2f-9e8c-1d0b5a4c3e2f@example.com>"),
                                 ("Date", "Tue, 1 Dec 2026 08:03:44 +0100"), ("MIME-Version", "1.0"),
                                 ("User-Agent", "Mozilla Thunderbird"), ("Content-Language", "en-GB"),
                                 ("To", "Reclaim <%s>" % TOKEN_ADDRESS), ("From", "Ada Lovelace <ada.lovelace@example.com>"),
                                 ("Subject", "Fwd: Your account is locked (case %s)" % CASE)]):
        outer._headers.insert(0, (name, value))
    return write("forwarded-rfc822.eml", outer)


if __name__ == "__main__":
    data = gmail()
    with open(os.path.join(HERE, "gmail-reply-bare-lf.eml"), "wb") as f:
        # The same reply as a Maildir file some delivery agents write: bare LF line ends.
        f.write(data.replace(b"\r\n", b"\n"))
    outlook()
    apple()
    foxmail()
    big5()
    html_only()
    auto_reply()
    forwarded()
    print("fixtures written to", HERE)
