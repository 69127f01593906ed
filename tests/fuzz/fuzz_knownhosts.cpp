// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzzes known_hosts lines (KnownHostsEntry): the first input line is the name looked up, every other
// line an entry. Whatever parses must write back to a line that parses to the same entry and matches the
// same names; a name matched by a !negation of a line never matches that line; globs are total.
#include "fuzzcheck.h"
#include "remote/hosts/knownhostsentry.h"

#include <QByteArray>
#include <QList>

#include <cstddef>
#include <cstdint>

using namespace moetune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const qsizetype nl = input.indexOf('\n');
    const QByteArray name = (nl < 0 ? input : input.left(nl)).trimmed().toLower();
    FUZZ_CHECK(KnownHostsEntry::globMatch(name, "*"));
    if (!name.contains('*') && !name.contains('?'))
        FUZZ_CHECK(KnownHostsEntry::globMatch(name, name));
    if (nl < 0)
        return 0;
    for (const QByteArray &line : input.mid(nl + 1).split('\n')) {
        QString error;
        const auto e = KnownHostsEntry::parse(line, &error);
        if (!e)
            continue;
        FUZZ_CHECK(error.isEmpty());
        FUZZ_CHECK(!e->hosts.isEmpty() && !e->keyType.isEmpty() && !e->key.isEmpty());
        const bool matched = e->matches(name);
        QByteArray written;
        if (e->marker == KnownHostsEntry::Marker::Revoked)
            written = "@revoked ";
        else if (e->marker == KnownHostsEntry::Marker::CertAuthority)
            written = "@cert-authority ";
        written += e->hosts + ' ' + e->keyType + ' ' + e->key.toBase64();
        const auto again = KnownHostsEntry::parse(written);
        FUZZ_CHECK(again.has_value());
        FUZZ_CHECK(again->marker == e->marker && again->hosts == e->hosts && again->keyType == e->keyType &&
                   again->key == e->key);
        FUZZ_CHECK(again->matches(name) == matched);
        if (!matched || e->hosts.startsWith("|1|"))
            continue;
        for (const QByteArray &pattern : e->hosts.split(','))
            FUZZ_CHECK(!(pattern.startsWith('!') && pattern.size() > 1 &&
                         KnownHostsEntry::globMatch(name, pattern.mid(1).toLower())));
    }
    return 0;
}
