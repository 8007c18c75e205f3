//! The pprof profile format: messages of `perftools.profiles` from
//! `proto/profile.proto` in github.com/google/pprof, written out by hand as
//! prost-build would generate them, so that building needs no `protoc`.
//!
//! Field numbers, for checking against the .proto:
//!
//! ```text
//! Profile   1 sample_type  2 sample  3 mapping  4 location  5 function
//!           6 string_table  7 drop_frames  8 keep_frames  9 time_nanos
//!           10 duration_nanos  11 period_type  12 period  13 comment
//!           14 default_sample_type
//! ValueType 1 type  2 unit
//! Sample    1 location_id  2 value  3 label
//! Label     1 key  2 str  3 num  4 num_unit
//! Mapping   1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename
//!           6 build_id  7 has_functions  8 has_filenames
//!           9 has_line_numbers  10 has_inline_frames
//! Location  1 id  2 mapping_id  3 address  4 line  5 is_folded
//! Line      1 function_id  2 line  3 column
//! Function  1 id  2 name  3 system_name  4 filename  5 start_line
//! ```
//!
//! The file is proto3, so repeated scalars are packed (prost's default) and
//! zero values are not written. Strings are indices into `string_table`,
//! whose entry 0 must be `""`.

// The fields are profile.proto's, documented there; as in the code
// prost-build generates, they carry no docs of their own.
#![allow(missing_docs)]

/// A whole profile: samples over stacks of locations.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: ::prost::alloc::vec::Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: ::prost::alloc::vec::Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: ::prost::alloc::vec::Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: ::prost::alloc::vec::Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: ::prost::alloc::vec::Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: ::core::option::Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: ::prost::alloc::vec::Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// The meaning and unit of one sample value.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// Values measured at one stack; `location_id[0]` is the leaf.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: ::prost::alloc::vec::Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: ::prost::alloc::vec::Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: ::prost::alloc::vec::Vec<Label>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A binary the locations belong to.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A program location; its lines list inlined functions innermost first.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: ::prost::alloc::vec::Vec<Line>,
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
    #[prost(int64, tag = "3")]
    pub column: i64,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}
