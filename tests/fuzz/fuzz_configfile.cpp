// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzzes config file contents: whatever parses must write and parse back to an equal value in both
// dialects, and writing must be byte-stable (write(parse(write(x))) == write(x)).
#include "core/moe/configfile.h"
#include "core/moe/framework.h"
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>

using namespace moetune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray json(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QString error;
    const std::optional<ConfigFile> parsed = ConfigFile::parse(json, &error);
    if (!parsed) {
        FUZZ_CHECK(!error.isEmpty()); // a rejected file always says why
        return 0;
    }
    for (const Framework dialect : {Framework::SGLang, Framework::VLLM}) {
        const QByteArray written = parsed->toJson(dialect);
        FUZZ_CHECK(written.endsWith('\n'));
        QString error2;
        const std::optional<ConfigFile> again = ConfigFile::parse(written, &error2);
        FUZZ_CHECK(again.has_value());
        FUZZ_CHECK(again->entries == parsed->entries);
        FUZZ_CHECK(again->toJson(dialect) == written);
    }
    for (auto it = parsed->entries.cbegin(); it != parsed->entries.cend(); ++it)
        FUZZ_CHECK(parsed->nearest(it.key()) == &it.value());
    return 0;
}
