// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "core/moe/framework.h"

using namespace Qt::StringLiterals;

namespace moetune {

QString frameworkName(Framework framework) {
    switch (framework) {
    case Framework::SGLang:
        return u"SGLang"_s;
    case Framework::VLLM:
        return u"vLLM"_s;
    case Framework::Unknown:
        break;
    }
    return u"unknown"_s;
}

QString frameworkId(Framework framework) {
    switch (framework) {
    case Framework::SGLang:
        return u"sglang"_s;
    case Framework::VLLM:
        return u"vllm"_s;
    case Framework::Unknown:
        break;
    }
    return u"unknown"_s;
}

Framework frameworkFromString(QStringView text) {
    if (text.compare(u"sglang", Qt::CaseInsensitive) == 0)
        return Framework::SGLang;
    if (text.compare(u"vllm", Qt::CaseInsensitive) == 0)
        return Framework::VLLM;
    return Framework::Unknown;
}

} // namespace moetune
