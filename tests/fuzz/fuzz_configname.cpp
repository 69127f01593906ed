// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzzes config file names: whatever parses must format and parse back to the same value, in both
// dialects (vLLM drops _down and per_channel_quant), and formatting must be stable.
#include "core/moe/configname.h"
#include "core/moe/framework.h"
#include "fuzzcheck.h"

#include <QString>

#include <cstddef>
#include <cstdint>

using namespace moetune;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QString text =
        QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const std::optional<ConfigName> parsed = ConfigName::parse(text);
    if (!parsed)
        return 0;

    const QString sglang = parsed->fileName(Framework::SGLang);
    const std::optional<ConfigName> again = ConfigName::parse(sglang);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *parsed);
    FUZZ_CHECK(again->fileName(Framework::SGLang) == sglang);

    // vLLM names carry no _down marker, so a name whose last field (device, dtype) itself ends in "_down"
    // reads back as a down file: an ambiguity of the format, not of the parser.
    const QString vllm = parsed->fileName(Framework::VLLM);
    if (vllm.endsWith(QStringLiteral("_down.json")))
        return 0;
    ConfigName vllmExpected = *parsed;
    vllmExpected.down = false;
    vllmExpected.perChannelQuant = false;
    const std::optional<ConfigName> fromVllm = ConfigName::parse(vllm);
    FUZZ_CHECK(fromVllm.has_value());
    FUZZ_CHECK(*fromVllm == vllmExpected);
    FUZZ_CHECK(fromVllm->fileName(Framework::VLLM) == vllm);
    // A path ending in the name parses to the same value.
    const std::optional<ConfigName> fromPath =
        ConfigName::parse(QString(QStringLiteral("/x/configs/triton_3_6_0/") + sglang));
    FUZZ_CHECK(fromPath.has_value() && *fromPath == *parsed);
    return 0;
}
