#!/usr/bin/env python3
"""The mailbox for deploy/bench/inbound (standard library only).

  inbound_load.py replies SENT MAILDIR COUNT
      -> COUNT replies to the mails in SENT (the .eml files the delivery worker wrote, one opening mail a case),
         written by Python's email package as clients write them and delivered into MAILDIR as an MTA does (tmp/,
         then renamed into new/); the cases in turn, so each sender stays under the service's hourly limit (30) when
         COUNT is at most 25 times the cases. Of every 100: 85 to the case's reply address (the +token) with
         In-Reply-To and References (Gmail's way), 10 to the plain address with only References naming the mail
         (another client that dropped In-Reply-To), 5 a new mail to the plain address with the case number in the
         subject (from the contact address); one in 5 carries an invoice photo (a real PNG of about 60 KB, noise that
         does not compress, as a phone's photo), one in 30 is a Chinese reply in GB18030 (Foxmail's way, base64).
         Prints "written attachments chinese"
"""
import email
import email.message
import email.policy
import email.utils
import glob
import os
import random
import struct
import sys
import time
import zlib


def png(width, height, seed):
    """A valid PNG of noise (incompressible, like a photo's detail)."""
    generator = random.Random(seed)

    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b''.join(b'\x00' + generator.randbytes(width * 3) for _ in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows, 1)) + chunk(b'IEND', b''))


CHINESE = '您好，\n\n附件是购买手机的发票扫描件，请查收。手机被盗后，小偷更改了账户的救援邮箱。\n\n谢谢！\n王小明\n'


def replies(sent_folder, maildir, count):
    count = int(count)
    sent = []
    for path in sorted(glob.glob(os.path.join(sent_folder, '*.eml'))):
        with open(path, 'rb') as file:
            mail = email.message_from_binary_file(file, policy=email.policy.default)
        if mail['Reply-To'] is None:
            continue
        sent.append(mail)
    if not sent:
        sys.exit('inbound_load: no sent mail with a Reply-To in %s' % sent_folder)
    for folder in ('tmp', 'new', 'cur'):
        os.makedirs(os.path.join(maildir, folder), exist_ok=True)
    attachments = chinese = 0
    for index in range(count):
        original = sent[index % len(sent)]
        contact = original['To'].addresses[0].addr_spec
        reply_to = original['Reply-To'].addresses[0].addr_spec
        plain = reply_to.split('+', 1)[0] + '@' + reply_to.split('@', 1)[1]
        reply = email.message.EmailMessage()
        reply['From'] = email.utils.formataddr(('Bench Owner', contact))
        reply['Date'] = email.utils.formatdate(localtime=True)
        reply['Message-ID'] = email.utils.make_msgid(idstring='r%d' % index, domain='example.org')
        kind = index % 100
        if kind < 85:
            reply['To'] = reply_to
            reply['Subject'] = 'Re: ' + original['Subject']
            reply['In-Reply-To'] = original['Message-ID']
            reply['References'] = original['Message-ID']
        elif kind < 95:
            reply['To'] = plain
            reply['Subject'] = 'Fwd: ' + original['Subject']
            reply['References'] = '<older-%d@example.org> %s' % (index, original['Message-ID'])
        else:
            reply['To'] = plain
            reply['Subject'] = 'More photos for ' + original['Subject']  # the subject holds the case number
        if index % 30 == 7:
            chinese += 1
            reply['X-Mailer'] = 'Foxmail 7.2.25.228[cn]'
            reply.set_content(CHINESE, charset='gb18030', cte='base64')
        else:
            reply.set_content('Hello,\n\nhere is what you asked for (reply %d).\n\nThanks\n\n> %s\n' % (index, original['Subject']))
        if index % 5 == 0:
            attachments += 1
            reply.add_attachment(png(140, 140, index), maintype='image', subtype='png', filename='invoice-%d.png' % index)
        name = '%d.M%dP%d.bench' % (time.time(), index, os.getpid())
        with open(os.path.join(maildir, 'tmp', name), 'wb') as file:
            file.write(reply.as_bytes(policy=email.policy.SMTP))
        os.rename(os.path.join(maildir, 'tmp', name), os.path.join(maildir, 'new', name))
    print(count, attachments, chinese)


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'replies':
        replies(*sys.argv[2:5])
    else:
        sys.exit(__doc__)
