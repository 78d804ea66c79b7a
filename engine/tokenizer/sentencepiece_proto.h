// The protobuf wire format of SentencePiece's ModelProto, written by hand.
//
// Debian's libsentencepiece-dev ships no generated sentencepiece_model.pb.h,
// yet SentencePieceProcessor::LoadFromSerializedProto wants the serialized
// bytes. Only the fields Kestrel sets are written; field numbers follow
// sentencepiece_model.proto (checked against the descriptor in PyPI
// sentencepiece's sentencepiece_model_pb2):
//   ModelProto      1 pieces (repeated message), 2 trainer_spec, 3 normalizer_spec
//   SentencePiece   1 piece (string), 2 score (float), 3 type (enum)
//   TrainerSpec     3 model_type, 4 vocab_size, 35 byte_fallback,
//                   40 unk_id, 41 bos_id, 42 eos_id, 43 pad_id
//   NormalizerSpec  1 name, 2 precompiled_charsmap, 3 add_dummy_prefix,
//                   4 remove_extra_whitespaces, 5 escape_whitespaces
// Fields are written even when equal to their proto2 default, so the parser
// never has to guess.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::tokenizer {

enum class SpmPieceType : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };
enum class SpmModelType : int32_t { Unigram = 1, Bpe = 2 };

struct SpmPiece {
    std::string piece;
    float score = 0.0f;
    SpmPieceType type = SpmPieceType::Normal;
};

struct SpmModelSpec {
    std::vector<SpmPiece> pieces;
    SpmModelType modelType = SpmModelType::Bpe;
    bool byteFallback = false;
    int32_t unkId = 0, bosId = -1, eosId = -1, padId = -1;
    std::string normalizerName = "identity";
    std::string precompiledCharsmap;  // empty: none (the identity normalizer)
    bool addDummyPrefix = false;
    bool removeExtraWhitespaces = false;
    bool escapeWhitespaces = true;
};

// The serialized ModelProto for `spec`.
std::string serializeModelProto(const SpmModelSpec& spec);

}  // namespace kestrel::tokenizer
